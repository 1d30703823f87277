//! The command line: clap definitions, turned into plain config values before anything runs
//! (the core never sees clap types).

pub mod complete;
pub mod confirm;
pub mod health;
pub mod kubeconfig;
pub mod logging;
pub mod output;
pub mod progress;
pub mod render;
pub mod style;
// The live read paths fuzzed: the cluster's answers mutated between the in-memory cluster and
// the use cases the read-only commands call (docs/testing.md).
#[cfg(test)]
mod fuzz_live;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::k8s::config::KubeFlags;

/// Exit codes, shown at the end of `--help`.
const EXIT_CODES: &str = "\
Exit codes:
  0  success, nothing to do
  1  the finding is positive (pods left unschedulable, drift found)
  2  usage or input error
  3  cluster or cloud error
  4  refused for safety
  141  stdout closed by its reader (e.g. `| head`): stopped quietly";

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

impl OutputFormat {
    /// The value as typed after `-o` (`table`, `wide`, `json`, `yaml`, `name`).
    pub fn name(self) -> &'static str {
        match self {
            OutputFormat::Table => "table",
            OutputFormat::Wide => "wide",
            OutputFormat::Json => "json",
            OutputFormat::Yaml => "yaml",
            OutputFormat::Name => "name",
        }
    }
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

/// How log lines are written to stderr.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum LogFormat {
    /// For people: `-v` lines as text.
    #[default]
    Text,
    /// For log collectors: one JSON object per line (timestamp, level, target, message,
    /// fields), the tool's own stderr lines included.
    Json,
}

/// What to do with a field of an `-f` manifest that the API server does not know (kubectl's
/// `--validate`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum ValidateMode {
    /// Refuse the input, naming the field (and the closest known one).
    #[default]
    #[value(alias = "true")]
    Strict,
    /// Warn on stderr and read on.
    Warn,
    /// Read on silently.
    #[value(alias = "false")]
    Ignore,
}

impl From<ValidateMode> for crate::api::schema::Validation {
    fn from(mode: ValidateMode) -> Self {
        match mode {
            ValidateMode::Strict => Self::Strict,
            ValidateMode::Warn => Self::Warn,
            ValidateMode::Ignore => Self::Ignore,
        }
    }
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
    /// Timeout of a single API request: nothing received for this long fails it (default 60s; 0 = none).
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
    /// EKS cluster name (default: derived from the kubeconfig; in a pod: required).
    #[arg(long, global = true, help_heading = "AWS")]
    pub cluster_name: Option<String>,
    /// Instance profile of the nodes launched (default: the node class's `instanceProfile`, else
    /// the one holding its `role`, else `aws.defaultInstanceProfile`).
    #[arg(long, global = true, value_name = "NAME", help_heading = "AWS")]
    pub instance_profile: Option<String>,
    /// API endpoint new nodes join (default: the kubeconfig's server; in a pod: required, the
    /// EKS cluster's endpoint).
    #[arg(long, global = true, value_name = "URL", help_heading = "AWS")]
    pub cluster_endpoint: Option<String>,
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
    /// More logging on stderr (repeatable: -v info, -vv debug; KUBECTL_KARPENTER_LOG overrides).
    #[arg(short = 'v', long, global = true, action = clap::ArgAction::Count, help_heading = "Output")]
    pub verbose: u8,
    /// Only errors on stderr.
    #[arg(short = 'q', long, global = true, help_heading = "Output")]
    pub quiet: bool,
    /// Stderr as text, or as one JSON object per line for log collectors.
    #[arg(
        long,
        global = true,
        value_enum,
        value_name = "FORMAT",
        default_value_t,
        help_heading = "Output"
    )]
    pub log_format: LogFormat,
    /// Fields of -f manifests the API server does not know: strict refuses them (=true),
    /// warn reads on with a warning, ignore (=false) reads on silently.
    #[arg(
        long,
        global = true,
        value_enum,
        value_name = "MODE",
        default_value_t,
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "strict",
        help_heading = "Input"
    )]
    pub validate: ValidateMode,
}

impl GlobalArgs {
    /// The kubeconfig flags, for connecting.
    pub fn kube_flags(&self) -> KubeFlags {
        KubeFlags {
            kubeconfig: self.kubeconfig.clone(),
            context: self.context.clone(),
            cluster: self.cluster.clone(),
            user: self.user.clone(),
            namespace: self.namespace.clone(),
            request_timeout: self.request_timeout.clone(),
            cluster_name: self.cluster_name.clone(),
            cluster_endpoint: self.cluster_endpoint.clone(),
        }
    }
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
    /// Show managed nodes: pool, type, zone, capacity type, AMI, age, drift, requests vs
    /// allocatable, $/hour, the consolidation decision, and totals per pool.
    #[command(after_help = NODES_EXAMPLES)]
    Nodes(NodesArgs),
    /// Detect drifted nodes and explain why (drift check).
    Drift(DriftArgs),
    /// What Karpenter's disruption controller would do to each node (expiration, drift,
    /// emptiness, consolidation), and why not for the others; --yes carries out expiration
    /// and consolidation.
    #[command(after_help = CONSOLIDATE_EXAMPLES)]
    Consolidate(ConsolidateArgs),
    /// Turn Karpenter's drift feature on in the running controller (v0.21–v0.37).
    #[command(name = "enable-drift", after_help = ENABLE_DRIFT_EXAMPLES)]
    EnableDrift(DriftGateArgs),
    /// Turn Karpenter's drift feature off in the running controller (v0.21–v0.37).
    #[command(name = "disable-drift", after_help = DISABLE_DRIFT_EXAMPLES)]
    DisableDrift(DriftGateArgs),
    /// Print the version.
    #[command(after_help = "Exit codes: 0 printed, 2 usage error.")]
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
  cp completions/kubectl_complete-karpenter ~/.local/bin/

Exit codes: 0 printed, 2 usage error (an unknown shell).";

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

  # Live: plan for the cluster's pending pods, launch after confirming, wait for the nodes
  kubectl karpenter provision --wait

  # Keep provisioning (and removing empty nodes) until Ctrl-C
  kubectl karpenter provision --watch --yes

Exit codes: 0 every pod placed, 1 pods left unschedulable, 2 bad input, 3 cluster or AWS error,\n4 refused (an in-cluster Karpenter controller runs, or no terminal to confirm on and no --yes).";

const CONVERT_EXAMPLES: &str = "\
Examples:
  # v1alpha5 Provisioner + AWSNodeTemplate, or v1beta1 NodePool + EC2NodeClass, to v1
  kubectl karpenter convert -f provisioner.yaml -f nodetemplate.yaml > v1.yaml

Exit codes: 0 converted (notes on stderr), 2 bad input (nothing printed).";

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
    #[command(flatten)]
    pub policies: SchedulingPolicyArgs,
    /// Feature gates, as the controller's FEATURE_GATES (`CapacityBuffer=true` plans the
    /// CapacityBuffers' capacity, `ReservedCapacity=false` plans and launches without capacity
    /// reservations). Live, the running controller's gates are the default.
    #[arg(long = "feature-gates", value_name = "GATES")]
    pub feature_gates: Option<String>,
    #[command(flatten)]
    pub type_settings: TypeSettingsArgs,
    /// Launch without asking (live mode).
    #[arg(short = 'y', long)]
    pub yes: bool,
    /// After launching, wait until the nodes are Ready and the pods bound.
    #[arg(long)]
    pub wait: bool,
    /// How long --wait waits (e.g. 10m).
    #[arg(long, value_name = "DURATION")]
    pub timeout: Option<String>,
    /// Keep running: batch pending pods like Karpenter, launch, and remove empty nodes.
    #[arg(long, conflicts_with = "dry_run")]
    pub watch: bool,
    /// Act even though an in-cluster Karpenter controller is running.
    #[arg(long)]
    pub force: bool,
    #[command(flatten)]
    pub lease: LeaseArgs,
    #[command(flatten)]
    pub health: HealthArgs,
}

/// `--feature-gates` (any command): the gate `name`, if the flag names it, as the controller's
/// `FEATURE_GATES` reads it; a value that is not a Go boolean is bad input naming the gate.
pub fn gate_flag(
    feature_gates: Option<&str>,
    name: &str,
) -> Result<Option<bool>, crate::error::CommandError> {
    crate::karpenter_install::gates::FeatureGates::new(feature_gates)
        .get(name)
        .transpose()
        .map_err(|raw| {
            crate::error::CommandError::input(format!(
                "--feature-gates {name}={raw}: expected true or false"
            ))
        })
}

impl ProvisionArgs {
    /// The `CapacityBuffer` gate `--feature-gates` sets, if it names it; a value Karpenter
    /// would refuse to start with is bad input.
    pub fn capacity_buffer_gate(&self) -> Result<Option<bool>, crate::error::CommandError> {
        self.gate(crate::usecases::provisioning::buffers::GATE)
    }

    /// The `ReservedCapacity` gate `--feature-gates` sets, if it names it (as
    /// [`ProvisionArgs::capacity_buffer_gate`]).
    pub fn reserved_capacity_gate(&self) -> Result<Option<bool>, crate::error::CommandError> {
        self.gate(crate::usecases::provisioning::RESERVED_CAPACITY_GATE)
    }

    /// The gate `name` in `--feature-gates`, if it names it.
    fn gate(&self, gate: &str) -> Result<Option<bool>, crate::error::CommandError> {
        gate_flag(self.feature_gates.as_deref(), gate)
    }

    /// `--nodepool`, `--max-instance-types`, `--min-values-policy` (default Strict) and
    /// `--preference-policy` (default Respect), for the use case.
    pub fn selection(&self) -> crate::usecases::provisioning::Selection {
        crate::usecases::provisioning::Selection {
            nodepools: self.nodepools.clone(),
            max_instance_types: self.max_instance_types,
            min_values_policy: self.policies.min_values().unwrap_or_default(),
            preference_policy: self.policies.preferences().unwrap_or_default(),
            node_overlay_gate: None,
            static_capacity_gate: None,
            capacity_buffer_gate: None,
            reserved_capacity_gate: None,
            vm_memory_overhead_percent: self.type_settings.vm_memory_overhead_percent,
            reserved_enis: self.type_settings.reserved_enis.map(i64::from),
            keep_not_ready: false,
        }
    }
}

/// The AWS controller's instance-type settings (`aws v1.14.1: pkg/operator/options/options.go`),
/// for the commands that size instance types as it does.
#[derive(Debug, Args, Clone, Copy, Default)]
pub struct TypeSettingsArgs {
    /// The AWS controller's VM_MEMORY_OVERHEAD_PERCENT (default 0.075): the memory share each
    /// instance type's capacity loses. Live, the running controller's is the default.
    #[arg(long, value_name = "FRACTION", value_parser = parse_overhead_percent)]
    pub vm_memory_overhead_percent: Option<f64>,
    /// The AWS controller's RESERVED_ENIS (default 0): ENIs that give no pods. Live, the running
    /// controller's is the default.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32))]
    pub reserved_enis: Option<u32>,
}

impl TypeSettingsArgs {
    /// The settings the flags give (`None` where a flag is not given).
    pub fn settings(&self) -> crate::usecases::live::TypeSettings {
        crate::usecases::live::TypeSettings {
            vm_memory_overhead_percent: self.vm_memory_overhead_percent,
            reserved_enis: self.reserved_enis.map(i64::from),
        }
    }
}

/// `--vm-memory-overhead-percent`: a number Karpenter would start with (not negative).
fn parse_overhead_percent(raw: &str) -> Result<f64, String> {
    crate::model::overhead::parse_vm_memory_overhead_percent(raw)
        .ok_or_else(|| format!("{raw:?} is not a non-negative number (e.g. 0.075)"))
}

/// `--min-values-policy` and `--preference-policy`: the Karpenter controller options the
/// decision follows.
#[derive(Debug, Args, Clone, Default)]
pub struct SchedulingPolicyArgs {
    /// What an unmet NodePool minValues does, as the controller's --min-values-policy /
    /// MIN_VALUES_POLICY: Strict (the pod waits) or BestEffort (minValues relaxed, the
    /// NodeClaim annotated). Live, the running controller's setting is the default.
    #[arg(
        long = "min-values-policy",
        value_name = "POLICY",
        value_parser = ["Strict", "BestEffort"]
    )]
    pub min_values_policy: Option<String>,
    /// Whether pods' preferences (preferred node and pod affinity and anti-affinity,
    /// ScheduleAnyway topology spreads) count, as the controller's --preference-policy /
    /// PREFERENCE_POLICY: Respect (required until relaxed) or Ignore. Live, the running
    /// controller's setting is the default.
    #[arg(
        long = "preference-policy",
        value_name = "POLICY",
        value_parser = ["Respect", "Ignore"]
    )]
    pub preference_policy: Option<String>,
}

impl SchedulingPolicyArgs {
    /// The `MinValuesPolicy` given, if any.
    pub fn min_values(&self) -> Option<crate::scheduling::MinValuesPolicy> {
        self.min_values_policy
            .as_deref()
            .and_then(crate::scheduling::MinValuesPolicy::parse)
    }

    /// The `PreferencePolicy` given, if any.
    pub fn preferences(&self) -> Option<crate::scheduling::PreferencePolicy> {
        self.preference_policy
            .as_deref()
            .and_then(crate::scheduling::PreferencePolicy::parse)
    }
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

/// `drift` subcommands.
#[derive(Debug, Args, Clone)]
pub struct DriftArgs {
    /// The drift command.
    #[command(subcommand)]
    pub command: DriftCommand,
}

/// `drift check` (and, later, `drift replace`).
#[derive(Debug, Subcommand, Clone)]
pub enum DriftCommand {
    /// Evaluate every managed node and explain why it drifted (exit 1 when any did).
    #[command(after_help = DRIFT_CHECK_EXAMPLES)]
    Check(DriftCheckArgs),
    /// Replace drifted (or named) nodes safely: replacement first, cordon, drain, terminate.
    #[command(after_help = DRIFT_REPLACE_EXAMPLES)]
    Replace(DriftReplaceArgs),
}

const DRIFT_REPLACE_EXAMPLES: &str = "\
Examples:
  # What would be replaced, in which order, and what blocks (nothing is changed)
  kubectl karpenter drift replace --dry-run

  # Replace every drifted node of NodePool default, two at a time at most
  kubectl karpenter drift replace --nodepool default --max-parallel 2

  # Replace one named node (drifted or not), without asking
  kubectl karpenter drift replace ip-10-0-1-23.ec2.internal --yes

Each node: tainted and cordoned (Ready,SchedulingDisabled), replacement capacity launched and
Ready before any pod is evicted (else rolled back), drained through the Eviction API (PDBs and
do-not-disrupt respected), then the Node deleted and its instance terminated. Every step is
recorded on the node (annotation kubectl-karpenter.io/replacement), so a re-run resumes.
NodePool disruption budgets (reason Drifted) and --max-parallel bound how many run at once;
the next node starts as soon as one is done.

With a Karpenter controller running, --via-controller hands the nodes to it instead: their
NodeClaims (v1alpha5: Machines, or Nodes) are deleted one budget's worth at a time, the
controller drains them and provisions for their pods, and the next goes when one is replaced.

Exit codes: 0 replaced (or nothing to do), 1 some nodes blocked, 2 bad input, 3 cluster or AWS
error, 4 refused (a Karpenter controller runs, or no terminal to confirm on and no --yes).";

/// `drift replace` flags.
#[derive(Debug, Args, Clone, Default)]
pub struct DriftReplaceArgs {
    /// Replace these nodes, drifted or not (default: every drifted managed node).
    #[arg(value_name = "NODE")]
    pub nodes: Vec<String>,
    /// Only nodes of these NodePools (or Provisioners).
    #[arg(long = "nodepool", value_name = "NAME")]
    pub nodepools: Vec<String>,
    /// Only nodes matching this label selector.
    #[arg(short = 'l', long = "selector", value_name = "SELECTOR")]
    pub selector: Option<String>,
    /// At most this many nodes in replacement at once (budgets may allow fewer).
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub max_parallel: usize,
    /// How long a drain may take per node (e.g. 15m).
    #[arg(long, value_name = "DURATION", default_value = "15m")]
    pub timeout: String,
    /// How long a replacement may take to become Ready before rolling back.
    #[arg(long, value_name = "DURATION", default_value = "10m")]
    pub ready_timeout: String,
    /// Print the plan and change nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Keep replacing as nodes drift, until Ctrl-C.
    #[arg(long, conflicts_with = "dry_run")]
    pub watch: bool,
    /// Replace without asking.
    #[arg(short = 'y', long)]
    pub yes: bool,
    /// Let the running Karpenter controller replace the nodes: delete their NodeClaims
    /// (Machines, Nodes) one budget's worth at a time, wait for each to be replaced.
    #[arg(long)]
    pub via_controller: bool,
    /// Act although a Karpenter controller runs, and evict do-not-disrupt pods.
    #[arg(long)]
    pub force: bool,
    /// Replace the instance-type catalog (JSON or YAML).
    #[arg(long, value_name = "FILE")]
    pub catalog: Option<String>,
    #[command(flatten)]
    pub policies: SchedulingPolicyArgs,
    /// Feature gates, as the controller's FEATURE_GATES (`CapacityBuffer=true`: the buffers'
    /// virtual pods take their room when replacements are planned; `ReservedCapacity=false`:
    /// replacements target no capacity reservation). Default: the controller's.
    #[arg(long = "feature-gates", value_name = "GATES")]
    pub feature_gates: Option<String>,
    #[command(flatten)]
    pub type_settings: TypeSettingsArgs,
    #[command(flatten)]
    pub lease: LeaseArgs,
}

/// The health endpoint of `--watch` (in a pod: the kubelet's probes).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct HealthArgs {
    /// With --watch: serve /healthz (the loop runs) and /readyz (holding the operator lease,
    /// the cluster read) on this address, e.g. :8081.
    #[arg(
        long,
        value_name = "ADDR",
        requires = "watch",
        help_heading = "Operator lease"
    )]
    pub health_addr: Option<String>,
}

/// The operator lease of the mutating commands (one run per cluster at a time).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct LeaseArgs {
    /// Wait this long for another run's operator lease instead of refusing (default 10m;
    /// `forever`: a standby replica in a pod).
    #[arg(long, value_name = "DURATION", num_args = 0..=1, default_missing_value = "10m", value_parser = lease_wait_flag, help_heading = "Operator lease")]
    pub wait_for_lease: Option<String>,
    /// Namespace of the operator lease (a coordination.k8s.io Lease named kubectl-karpenter).
    #[arg(
        long,
        value_name = "NAMESPACE",
        default_value = "kube-system",
        help_heading = "Operator lease"
    )]
    pub lease_namespace: String,
}

/// `--wait-for-lease`: a duration or `forever`, checked when the flags are read (exit 2 on every
/// path, a dry run's too, which never takes the lease).
fn lease_wait_flag(raw: &str) -> Result<String, String> {
    if raw == "forever" || crate::disruption::time::parse_duration_flag(raw).is_some() {
        Ok(raw.to_string())
    } else {
        Err("expected a duration such as 5m, or forever".to_string())
    }
}

const DRIFT_CHECK_EXAMPLES: &str = "\
Examples:
  # Preview a NodePool edit offline: nodes + NodePools + node classes from manifests
  kubectl karpenter drift check -f nodes.yaml -f nodepool.yaml -f ec2nodeclass.yaml

  # AMI aliases offline: give the SSM parameter values yourself
  kubectl karpenter drift check -f manifests/ --kubernetes-version 1.30 \\
    --ssm-param /aws/service/eks/optimized-ami/1.30/amazon-linux-2023/x86_64/standard/recommended/image_id=ami-0123

  # As a CI gate, machine-readable (kind: DriftReport)
  kubectl karpenter drift check -f manifests/ -o json

Offline, a node's current AMI is its NodeClaim's status.imageID or the node annotation
kubectl-karpenter.io/image-id; its subnet and security groups the annotations
kubectl-karpenter.io/subnet-id and kubectl-karpenter.io/security-group-ids.

Exit codes: 0 nothing drifted, 1 drift found, 2 bad input, 3 cluster or AWS error (live, --mark).";

const CONSOLIDATE_EXAMPLES: &str = "\
Examples:
  # What would Karpenter's disruption controller do now, and why not for each other node?
  kubectl karpenter consolidate

  # From manifests (kubectl get nodes,nodeclaims,nodepools,pods,pdb,daemonsets -A -o yaml),
  # at a given instant, with spot-to-spot consolidation on
  kubectl karpenter consolidate -f cluster.yaml --now 2024-06-24T12:00:00Z \\
      --feature-gates SpotToSpotConsolidation=true

  # The report as a document
  kubectl karpenter consolidate --nodepool default -o yaml

  # What --yes would do now (the first action, node by node), changing nothing
  kubectl karpenter consolidate --dry-run

  # Do it: delete and replace through drift replace's pipeline, deciding again after each
  # action, until nothing more would go (--watch: and keep doing it until Ctrl-C)
  kubectl karpenter consolidate --yes

Each pool follows the Karpenter release of its API generation (v1: v1.14.1, v1beta1: v0.37.7,
v1alpha5: v0.31.4); live, the installed controller's release and FEATURE_GATES win.

Exit codes: 0 nothing to do (with --yes: everything decided was done), 1 Karpenter would
disrupt some node (with --yes: some node it chose was blocked or waits for budget), 2 bad input
(e.g. --now not RFC 3339), 3 cluster or AWS error (with --yes: a node rolled back or failed),
4 refused (a running Karpenter controller without --force, another run's operator lease, no
terminal to confirm --watch without --yes).";

/// `consolidate` flags.
#[derive(Debug, Args, Clone, Default)]
pub struct ConsolidateArgs {
    /// Only these nodes in the report (default: every managed node).
    #[arg(value_name = "NODE")]
    pub nodes: Vec<String>,
    /// Manifest files or directories (`-` for stdin): offline mode.
    #[arg(short = 'f', long = "filename", value_name = "PATH")]
    pub filenames: Vec<String>,
    /// Only nodes of these NodePools (or Provisioners) in the report.
    #[arg(long = "nodepool", value_name = "NAME")]
    pub nodepools: Vec<String>,
    /// Replace the instance-type catalog (JSON or YAML).
    #[arg(long, value_name = "FILE")]
    pub catalog: Option<String>,
    /// The instant evaluated, RFC 3339 (default: now).
    #[arg(long, value_name = "RFC3339")]
    pub now: Option<String>,
    /// Feature gates, as the controller's FEATURE_GATES (`SpotToSpotConsolidation=true`,
    /// `CapacityBuffer=true`, `ReservedCapacity=false`). Live, the running controller's gates
    /// are the default.
    #[arg(long = "feature-gates", value_name = "GATES")]
    pub feature_gates: Option<String>,
    #[command(flatten)]
    pub policies: SchedulingPolicyArgs,
    #[command(flatten)]
    pub type_settings: TypeSettingsArgs,
    /// Show what --yes would do now (the first action, node by node) and change nothing (live).
    #[arg(long)]
    pub dry_run: bool,
    /// Carry the decisions out without asking (live): deletes and replacements through the
    /// replace pipeline, deciding again after each action.
    #[arg(short = 'y', long, conflicts_with = "dry_run")]
    pub yes: bool,
    /// Keep consolidating as the cluster changes, until Ctrl-C (asks once on a terminal).
    #[arg(long, conflicts_with = "dry_run")]
    pub watch: bool,
    /// Act although a Karpenter controller runs (consolidation is its job there).
    #[arg(long)]
    pub force: bool,
    /// How long a node's drain may take (also how long a PDB at zero is waited for).
    #[arg(long, value_name = "DURATION", default_value = "15m")]
    pub timeout: String,
    /// How long a replacement may take to be Ready before the node is rolled back.
    #[arg(long, value_name = "DURATION", default_value = "10m")]
    pub ready_timeout: String,
    #[command(flatten)]
    pub lease: LeaseArgs,
    #[command(flatten)]
    pub health: HealthArgs,
}

/// `drift check` flags.
#[derive(Debug, Args, Clone, Default)]
pub struct DriftCheckArgs {
    /// Only these nodes (default: every managed node).
    #[arg(value_name = "NODE")]
    pub nodes: Vec<String>,
    /// Manifest files or directories (`-` for stdin): offline mode.
    #[arg(short = 'f', long = "filename", value_name = "PATH")]
    pub filenames: Vec<String>,
    /// Only nodes of these NodePools (or Provisioners).
    #[arg(long = "nodepool", value_name = "NAME")]
    pub nodepools: Vec<String>,
    /// Only nodes matching this label selector (`k=v,k!=v,k in (a,b),k notin (a),k,!k`).
    #[arg(short = 'l', long = "selector", value_name = "SELECTOR")]
    pub selector: Option<String>,
    /// Offline SSM parameter values for AMI aliases and ssmParameter terms (repeatable).
    #[arg(long = "ssm-param", value_name = "NAME=VALUE")]
    pub ssm_params: Vec<String>,
    /// Replace the instance-type catalog used for InstanceTypeNotFound (JSON or YAML).
    #[arg(long, value_name = "FILE")]
    pub catalog: Option<String>,
    /// Write the result to the cluster (needs a cluster).
    #[arg(long)]
    pub mark: bool,
    /// With --mark: say which nodes' markers would change and write nothing (drift check
    /// itself changes nothing).
    #[arg(long)]
    pub dry_run: bool,
}

const ENABLE_DRIFT_EXAMPLES: &str = "\
Examples:
  # What would change? (nothing is changed)
  kubectl karpenter enable-drift --dry-run

  # v0.21-v0.31: sets featureGates.driftEnabled=\"true\" in ConfigMap karpenter-global-settings,
  # then restarts the controller (like kubectl rollout restart) and waits for the rollout
  kubectl karpenter enable-drift --karpenter-namespace karpenter --yes

  # v0.32-v0.37: sets Drift=true in the controller's FEATURE_GATES env (other gates kept)
  kubectl karpenter enable-drift -o json --yes

  # v1.0+: drift has no gate; shows the NodePools' disruption budgets for Drifted instead
  kubectl karpenter enable-drift

Exit codes: 0 changed, already as asked, or nothing to change (v1), 2 bad flags or several\n\
controllers (pick one with --karpenter-namespace), 3 cluster error (no controller, missing\n\
ConfigMap, rollout timeout), 4 no terminal to confirm on and no --yes.";

const DISABLE_DRIFT_EXAMPLES: &str = "\
Examples:
  # What would change?
  kubectl karpenter disable-drift --dry-run

  # Turn drift off and wait for the controller to roll out again
  kubectl karpenter disable-drift --yes --timeout 10m

  # v0.21-v0.31: only edit the ConfigMap; restart the controller yourself later
  kubectl karpenter disable-drift --no-restart --yes

Exit codes: 0 changed, already as asked, or nothing to change (v1), 2 bad flags or several\n\
controllers, 3 cluster error, 4 no terminal to confirm on and no --yes.";

/// `enable-drift` / `disable-drift` flags.
#[derive(Debug, Args, Clone, Default)]
pub struct DriftGateArgs {
    /// Namespace of the Karpenter controller Deployment (default: found in any namespace;
    /// `-n` works too).
    #[arg(long, value_name = "NS")]
    pub karpenter_namespace: Option<String>,
    /// v0.21–v0.31: only edit the ConfigMap, do not restart the controller (it reads its
    /// settings at startup, so the change waits for its next restart).
    #[arg(long)]
    pub no_restart: bool,
    /// Print what would change and change nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Change without asking.
    #[arg(short = 'y', long)]
    pub yes: bool,
    /// How long to wait for the controller's rollout (e.g. 10m).
    #[arg(long, value_name = "DURATION", default_value = "5m")]
    pub timeout: String,
}

const NODES_EXAMPLES: &str = "\
Examples:
  # Every managed node, with totals per NodePool
  kubectl karpenter nodes

  # One pool, with instance ids, AMI names and NodeClaims
  kubectl karpenter nodes --nodepool default -o wide

  # Spot nodes as JSON (kind: NodeList; CPU in millicores, memory in bytes)
  kubectl karpenter nodes -l karpenter.sh/capacity-type=spot -o json

  # Without calling AWS (AMIs from NodeClaims, prices from the embedded catalog)
  kubectl karpenter nodes --no-aws

Prices are on-demand list prices from the embedded catalog (or --catalog FILE); spot nodes are
priced only by a custom catalog with spot offerings. DRIFT is evaluated from what the cluster
holds (hash annotations, requirements, node-class status) and the controller's Drifted
condition; `kubectl karpenter drift check` explains in full.

Exit codes: 0 success, 2 bad input, 3 cluster error.";

/// `nodes` flags.
#[derive(Debug, Args, Clone, Default)]
pub struct NodesArgs {
    /// Manifest files or directories (`-` for stdin): offline mode (AWS is not asked).
    #[arg(short = 'f', long = "filename", value_name = "PATH")]
    pub filenames: Vec<String>,
    /// The instant evaluated (ages, the consolidation decision), RFC 3339 (default: now).
    #[arg(long, value_name = "RFC3339")]
    pub now: Option<String>,
    /// Only nodes of these NodePools (or Provisioners).
    #[arg(long = "nodepool", value_name = "NAME")]
    pub nodepools: Vec<String>,
    /// Only nodes matching this label selector (`k=v,k!=v,k in (a,b),k notin (a),k,!k`).
    #[arg(short = 'l', long = "selector", value_name = "SELECTOR")]
    pub selector: Option<String>,
    /// Replace the instance-type catalog used for prices (JSON or YAML, see the README).
    #[arg(long, value_name = "FILE")]
    pub catalog: Option<String>,
    /// Do not call AWS: instance facts and AMIs from the cluster only.
    #[arg(long)]
    pub no_aws: bool,
    /// Leave out the consolidation decision (the CONSOLIDATION column: `-`), which evaluates
    /// the whole cluster — faster on a large one.
    #[arg(long)]
    pub no_decision: bool,
    /// Feature gates the CONSOLIDATION column decides with, as the controller's FEATURE_GATES
    /// (`SpotToSpotConsolidation=true`, `CapacityBuffer=true`, `ReservedCapacity=false`). Live,
    /// the running controller's gates are the default.
    #[arg(long = "feature-gates", value_name = "GATES")]
    pub feature_gates: Option<String>,
    #[command(flatten)]
    pub policies: SchedulingPolicyArgs,
    #[command(flatten)]
    pub type_settings: TypeSettingsArgs,
}
