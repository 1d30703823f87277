//! The command line: clap definitions, turned into plain config values before anything runs
//! (the core never sees clap types).

pub mod complete;
pub mod kubeconfig;
pub mod output;
pub mod style;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// Exit codes, shown at the end of `--help`.
const EXIT_CODES: &str = "\
Exit codes:
  0  success, nothing to do
  1  the finding is positive (pods left unschedulable, drift found)
  2  usage or input error
  3  cluster or cloud error
  4  refused for safety";

/// Karpenter's provisioning and drift logic, run on your machine.
#[derive(Debug, Parser)]
#[command(
    name = "kubectl karpenter",
    bin_name = "kubectl karpenter",
    version,
    about = "Karpenter's provisioning and drift logic, run on your machine",
    long_about = "Plans (and, on a live cluster, launches) the EC2 capacity Karpenter would create for \
pending pods, explains drift and replaces drifted nodes at your pace. Offline previews work from \
manifests with no cluster and no AWS account.",
    after_help = EXIT_CODES,
    propagate_version = true
)]
pub struct Cli {
    /// Global options.
    #[command(flatten)]
    pub global: GlobalArgs,
    /// The command.
    #[command(subcommand)]
    pub command: Command,
}

/// Output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum OutputFormat {
    /// Aligned columns.
    #[default]
    Table,
    /// Columns with more detail.
    Wide,
    /// The versioned JSON document.
    Json,
    /// The versioned YAML document.
    Yaml,
    /// One `kind/name` per line.
    Name,
}

/// When to colour output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum ColorChoice {
    /// Only on a terminal, and never with `NO_COLOR`.
    #[default]
    Auto,
    /// Always.
    Always,
    /// Never.
    Never,
}

/// Flags every command takes (kubectl does not forward its own flags to plugins).
#[derive(Debug, Args, Clone, Default)]
pub struct GlobalArgs {
    /// Path to the kubeconfig file.
    #[arg(long, global = true, value_name = "PATH", help_heading = "Kubernetes")]
    pub kubeconfig: Option<String>,
    /// The kubeconfig context to use.
    #[arg(long, global = true, help_heading = "Kubernetes")]
    pub context: Option<String>,
    /// The kubeconfig cluster to use.
    #[arg(long, global = true, help_heading = "Kubernetes")]
    pub cluster: Option<String>,
    /// The kubeconfig user to use.
    #[arg(long, global = true, help_heading = "Kubernetes")]
    pub user: Option<String>,
    /// Namespace, where it applies.
    #[arg(short = 'n', long, global = true, help_heading = "Kubernetes")]
    pub namespace: Option<String>,
    /// Timeout of a single API request (e.g. 30s).
    #[arg(
        long,
        global = true,
        value_name = "DURATION",
        help_heading = "Kubernetes"
    )]
    pub request_timeout: Option<String>,
    /// Kubernetes version X.Y (default: the API server's; offline: assumed and said so).
    #[arg(long, global = true, value_name = "X.Y", help_heading = "Kubernetes")]
    pub kubernetes_version: Option<String>,
    /// AWS region (default: the AWS environment/config, else the EKS cluster ARN).
    #[arg(long, global = true, help_heading = "AWS")]
    pub region: Option<String>,
    /// AWS shared-config profile.
    #[arg(long, global = true, help_heading = "AWS")]
    pub profile: Option<String>,
    /// EKS cluster name (default: derived from the kubeconfig).
    #[arg(long, global = true, help_heading = "AWS")]
    pub cluster_name: Option<String>,
    /// Output format.
    #[arg(
        short = 'o',
        long,
        global = true,
        value_enum,
        default_value_t,
        help_heading = "Output"
    )]
    pub output: OutputFormat,
    /// Omit table headers.
    #[arg(long, global = true, help_heading = "Output")]
    pub no_headers: bool,
    /// Colour output (NO_COLOR is honoured under auto).
    #[arg(
        long,
        global = true,
        value_enum,
        default_value_t,
        help_heading = "Output"
    )]
    pub color: ColorChoice,
    /// More logging on stderr (repeatable).
    #[arg(short = 'v', long, global = true, action = clap::ArgAction::Count, help_heading = "Output")]
    pub verbose: u8,
    /// Only errors on stderr.
    #[arg(short = 'q', long, global = true, help_heading = "Output")]
    pub quiet: bool,
}

/// The commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Plan the capacity Karpenter would launch for pending pods.
    #[command(after_help = PROVISION_EXAMPLES)]
    Provision(ProvisionArgs),
    /// Show the AMIs each node class resolves to, and from which SSM parameter or filter.
    #[command(after_help = AMI_EXAMPLES)]
    Ami(AmiArgs),
    /// Convert v1alpha5 and v1beta1 Karpenter manifests to v1.
    #[command(after_help = CONVERT_EXAMPLES)]
    Convert(ConvertArgs),
    /// Print the version.
    Version,
    /// Print a shell completion script (bash, zsh, fish, powershell).
    #[command(after_help = COMPLETION_EXAMPLES)]
    Completion(CompletionArgs),
    /// Completion candidates for kubectl's plugin-completion protocol (used by
    /// `kubectl_complete-karpenter`).
    #[command(name = "__complete", hide = true)]
    Complete(CompleteArgs),
}

const COMPLETION_EXAMPLES: &str = "\
Examples:
  # bash, for this session
  source <(kubectl karpenter completion bash)
  # kubectl >= 1.26 completes `kubectl karpenter ...` through kubectl_complete-karpenter
  cp completions/kubectl_complete-karpenter ~/.local/bin/";

/// `completion` arguments.
#[derive(Debug, Args, Clone)]
pub struct CompletionArgs {
    /// The shell.
    #[arg(value_parser = ["bash", "zsh", "fish", "powershell"])]
    pub shell: String,
}

/// `__complete` arguments: the words typed after `kubectl karpenter`, the last one partial.
#[derive(Debug, Args, Clone)]
pub struct CompleteArgs {
    /// Words typed so far.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub words: Vec<String>,
}

const PROVISION_EXAMPLES: &str = "\
Examples:
  # What would Karpenter launch for these manifests? (no cluster, no AWS account needed)
  kubectl karpenter provision --dry-run -f nodepool.yaml -f deployment.yaml

  # The same as JSON (kind: ProvisioningPlan), for scripts
  kubectl karpenter provision --dry-run -f manifests/ -o json

  # What-if with your own instance-type catalog
  kubectl karpenter provision --dry-run -f manifests/ --catalog shapes.yaml

Exit codes: 0 every pod placed, 1 pods left unschedulable, 2 bad input.";

const CONVERT_EXAMPLES: &str = "\
Examples:
  # v1alpha5 Provisioner + AWSNodeTemplate, or v1beta1 NodePool + EC2NodeClass, to v1
  kubectl karpenter convert -f provisioner.yaml -f nodetemplate.yaml > v1.yaml";

/// `provision` flags.
#[derive(Debug, Args, Clone, Default)]
pub struct ProvisionArgs {
    /// Manifest files or directories (`-` for stdin): offline mode.
    #[arg(short = 'f', long = "filename", value_name = "PATH")]
    pub filenames: Vec<String>,
    /// Only consider these NodePools (or Provisioners).
    #[arg(long = "nodepool", value_name = "NAME")]
    pub nodepools: Vec<String>,
    /// Print the plan and change nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Replace the instance-type catalog (JSON or YAML, see the README).
    #[arg(long, value_name = "FILE")]
    pub catalog: Option<String>,
    /// Keep at most this many instance types per NodeClaim (Karpenter: 600).
    #[arg(long, value_name = "N", default_value_t = crate::scheduling::DEFAULT_MAX_INSTANCE_TYPES)]
    pub max_instance_types: usize,
}

const AMI_EXAMPLES: &str = "\
Examples:
  # Which AMIs do the node classes in these manifests resolve to, and from which SSM parameters?
  kubectl karpenter ami -f ec2nodeclass.yaml --kubernetes-version 1.30 --region us-west-2

  # One class, as JSON (kind: AMIResolution), with the AWS calls it took
  kubectl karpenter ami default -f manifests/ -o json

  # Just the AMI ids, newest first
  kubectl karpenter ami -f manifests/ -o name

AWS region, profile and endpoint come from --region/--profile and the standard AWS environment
and config files (AWS_REGION, AWS_PROFILE, AWS_ENDPOINT_URL, ...). Without --kubernetes-version,
aliases and amiFamily defaults use an assumed version (a warning says which).

Exit codes: 0 every class resolved, 2 bad input, 3 AWS error or a class resolved no AMI.";

/// `ami` arguments.
#[derive(Debug, Args, Clone, Default)]
pub struct AmiArgs {
    /// Node classes to show (EC2NodeClass, AWSNodeTemplate; default: every one in the input).
    #[arg(value_name = "NODECLASS")]
    pub nodeclasses: Vec<String>,
    /// Manifest files or directories (`-` for stdin) holding the node classes.
    #[arg(short = 'f', long = "filename", value_name = "PATH")]
    pub filenames: Vec<String>,
}

/// `convert` flags.
#[derive(Debug, Args, Clone, Default)]
pub struct ConvertArgs {
    /// Manifest files or directories (`-` for stdin).
    #[arg(short = 'f', long = "filename", value_name = "PATH", required = true)]
    pub filenames: Vec<String>,
    /// Target API version.
    #[arg(long, default_value = "v1", value_parser = ["v1"])]
    pub to: String,
}
