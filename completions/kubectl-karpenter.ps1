
using namespace System.Management.Automation
using namespace System.Management.Automation.Language

Register-ArgumentCompleter -Native -CommandName 'kubectl-karpenter' -ScriptBlock {
    param($wordToComplete, $commandAst, $cursorPosition)

    $commandElements = $commandAst.CommandElements
    $command = @(
        'kubectl-karpenter'
        for ($i = 1; $i -lt $commandElements.Count; $i++) {
            $element = $commandElements[$i]
            if ($element -isnot [StringConstantExpressionAst] -or
                $element.StringConstantType -ne [StringConstantType]::BareWord -or
                $element.Value.StartsWith('-') -or
                $element.Value -eq $wordToComplete) {
                break
        }
        $element.Value
    }) -join ';'

    $completions = @(switch ($command) {
        'kubectl-karpenter' {
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The kubeconfig cluster to use')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The kubeconfig user to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace, where it applies')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace, where it applies')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Timeout of a single API request (e.g. 30s)')
            [CompletionResult]::new('--kubernetes-version', '--kubernetes-version', [CompletionResultType]::ParameterName, 'Kubernetes version X.Y (default: the API server''s; offline: assumed and said so)')
            [CompletionResult]::new('--region', '--region', [CompletionResultType]::ParameterName, 'AWS region (default: the AWS environment/config, else the EKS cluster ARN)')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'AWS shared-config profile')
            [CompletionResult]::new('--cluster-name', '--cluster-name', [CompletionResultType]::ParameterName, 'EKS cluster name (default: derived from the kubeconfig)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour output (NO_COLOR is honoured under auto)')
            [CompletionResult]::new('--no-headers', '--no-headers', [CompletionResultType]::ParameterName, 'Omit table headers')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More logging on stderr (repeatable)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More logging on stderr (repeatable)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Only errors on stderr')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Only errors on stderr')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('provision', 'provision', [CompletionResultType]::ParameterValue, 'Plan the capacity Karpenter would launch for pending pods')
            [CompletionResult]::new('ami', 'ami', [CompletionResultType]::ParameterValue, 'Show the AMIs each node class resolves to, and from which SSM parameter or filter')
            [CompletionResult]::new('convert', 'convert', [CompletionResultType]::ParameterValue, 'Convert v1alpha5 and v1beta1 Karpenter manifests to v1')
            [CompletionResult]::new('version', 'version', [CompletionResultType]::ParameterValue, 'Print the version')
            [CompletionResult]::new('completion', 'completion', [CompletionResultType]::ParameterValue, 'Print a shell completion script (bash, zsh, fish, powershell)')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'kubectl-karpenter;provision' {
            [CompletionResult]::new('-f', '-f', [CompletionResultType]::ParameterName, 'Manifest files or directories (`-` for stdin): offline mode')
            [CompletionResult]::new('--filename', '--filename', [CompletionResultType]::ParameterName, 'Manifest files or directories (`-` for stdin): offline mode')
            [CompletionResult]::new('--nodepool', '--nodepool', [CompletionResultType]::ParameterName, 'Only consider these NodePools (or Provisioners)')
            [CompletionResult]::new('--catalog', '--catalog', [CompletionResultType]::ParameterName, 'Replace the instance-type catalog (JSON or YAML, see the README)')
            [CompletionResult]::new('--max-instance-types', '--max-instance-types', [CompletionResultType]::ParameterName, 'Keep at most this many instance types per NodeClaim (Karpenter: 600)')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The kubeconfig cluster to use')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The kubeconfig user to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace, where it applies')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace, where it applies')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Timeout of a single API request (e.g. 30s)')
            [CompletionResult]::new('--kubernetes-version', '--kubernetes-version', [CompletionResultType]::ParameterName, 'Kubernetes version X.Y (default: the API server''s; offline: assumed and said so)')
            [CompletionResult]::new('--region', '--region', [CompletionResultType]::ParameterName, 'AWS region (default: the AWS environment/config, else the EKS cluster ARN)')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'AWS shared-config profile')
            [CompletionResult]::new('--cluster-name', '--cluster-name', [CompletionResultType]::ParameterName, 'EKS cluster name (default: derived from the kubeconfig)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour output (NO_COLOR is honoured under auto)')
            [CompletionResult]::new('--dry-run', '--dry-run', [CompletionResultType]::ParameterName, 'Print the plan and change nothing')
            [CompletionResult]::new('--no-headers', '--no-headers', [CompletionResultType]::ParameterName, 'Omit table headers')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More logging on stderr (repeatable)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More logging on stderr (repeatable)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Only errors on stderr')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Only errors on stderr')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-karpenter;ami' {
            [CompletionResult]::new('-f', '-f', [CompletionResultType]::ParameterName, 'Manifest files or directories (`-` for stdin) holding the node classes')
            [CompletionResult]::new('--filename', '--filename', [CompletionResultType]::ParameterName, 'Manifest files or directories (`-` for stdin) holding the node classes')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The kubeconfig cluster to use')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The kubeconfig user to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace, where it applies')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace, where it applies')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Timeout of a single API request (e.g. 30s)')
            [CompletionResult]::new('--kubernetes-version', '--kubernetes-version', [CompletionResultType]::ParameterName, 'Kubernetes version X.Y (default: the API server''s; offline: assumed and said so)')
            [CompletionResult]::new('--region', '--region', [CompletionResultType]::ParameterName, 'AWS region (default: the AWS environment/config, else the EKS cluster ARN)')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'AWS shared-config profile')
            [CompletionResult]::new('--cluster-name', '--cluster-name', [CompletionResultType]::ParameterName, 'EKS cluster name (default: derived from the kubeconfig)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour output (NO_COLOR is honoured under auto)')
            [CompletionResult]::new('--no-headers', '--no-headers', [CompletionResultType]::ParameterName, 'Omit table headers')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More logging on stderr (repeatable)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More logging on stderr (repeatable)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Only errors on stderr')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Only errors on stderr')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-karpenter;convert' {
            [CompletionResult]::new('-f', '-f', [CompletionResultType]::ParameterName, 'Manifest files or directories (`-` for stdin)')
            [CompletionResult]::new('--filename', '--filename', [CompletionResultType]::ParameterName, 'Manifest files or directories (`-` for stdin)')
            [CompletionResult]::new('--to', '--to', [CompletionResultType]::ParameterName, 'Target API version')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The kubeconfig cluster to use')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The kubeconfig user to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace, where it applies')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace, where it applies')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Timeout of a single API request (e.g. 30s)')
            [CompletionResult]::new('--kubernetes-version', '--kubernetes-version', [CompletionResultType]::ParameterName, 'Kubernetes version X.Y (default: the API server''s; offline: assumed and said so)')
            [CompletionResult]::new('--region', '--region', [CompletionResultType]::ParameterName, 'AWS region (default: the AWS environment/config, else the EKS cluster ARN)')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'AWS shared-config profile')
            [CompletionResult]::new('--cluster-name', '--cluster-name', [CompletionResultType]::ParameterName, 'EKS cluster name (default: derived from the kubeconfig)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour output (NO_COLOR is honoured under auto)')
            [CompletionResult]::new('--no-headers', '--no-headers', [CompletionResultType]::ParameterName, 'Omit table headers')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More logging on stderr (repeatable)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More logging on stderr (repeatable)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Only errors on stderr')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Only errors on stderr')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-karpenter;version' {
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The kubeconfig cluster to use')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The kubeconfig user to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace, where it applies')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace, where it applies')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Timeout of a single API request (e.g. 30s)')
            [CompletionResult]::new('--kubernetes-version', '--kubernetes-version', [CompletionResultType]::ParameterName, 'Kubernetes version X.Y (default: the API server''s; offline: assumed and said so)')
            [CompletionResult]::new('--region', '--region', [CompletionResultType]::ParameterName, 'AWS region (default: the AWS environment/config, else the EKS cluster ARN)')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'AWS shared-config profile')
            [CompletionResult]::new('--cluster-name', '--cluster-name', [CompletionResultType]::ParameterName, 'EKS cluster name (default: derived from the kubeconfig)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour output (NO_COLOR is honoured under auto)')
            [CompletionResult]::new('--no-headers', '--no-headers', [CompletionResultType]::ParameterName, 'Omit table headers')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More logging on stderr (repeatable)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More logging on stderr (repeatable)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Only errors on stderr')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Only errors on stderr')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-karpenter;completion' {
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The kubeconfig cluster to use')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The kubeconfig user to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace, where it applies')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace, where it applies')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Timeout of a single API request (e.g. 30s)')
            [CompletionResult]::new('--kubernetes-version', '--kubernetes-version', [CompletionResultType]::ParameterName, 'Kubernetes version X.Y (default: the API server''s; offline: assumed and said so)')
            [CompletionResult]::new('--region', '--region', [CompletionResultType]::ParameterName, 'AWS region (default: the AWS environment/config, else the EKS cluster ARN)')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'AWS shared-config profile')
            [CompletionResult]::new('--cluster-name', '--cluster-name', [CompletionResultType]::ParameterName, 'EKS cluster name (default: derived from the kubeconfig)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour output (NO_COLOR is honoured under auto)')
            [CompletionResult]::new('--no-headers', '--no-headers', [CompletionResultType]::ParameterName, 'Omit table headers')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More logging on stderr (repeatable)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More logging on stderr (repeatable)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Only errors on stderr')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Only errors on stderr')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-karpenter;help' {
            [CompletionResult]::new('provision', 'provision', [CompletionResultType]::ParameterValue, 'Plan the capacity Karpenter would launch for pending pods')
            [CompletionResult]::new('ami', 'ami', [CompletionResultType]::ParameterValue, 'Show the AMIs each node class resolves to, and from which SSM parameter or filter')
            [CompletionResult]::new('convert', 'convert', [CompletionResultType]::ParameterValue, 'Convert v1alpha5 and v1beta1 Karpenter manifests to v1')
            [CompletionResult]::new('version', 'version', [CompletionResultType]::ParameterValue, 'Print the version')
            [CompletionResult]::new('completion', 'completion', [CompletionResultType]::ParameterValue, 'Print a shell completion script (bash, zsh, fish, powershell)')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'kubectl-karpenter;help;provision' {
            break
        }
        'kubectl-karpenter;help;ami' {
            break
        }
        'kubectl-karpenter;help;convert' {
            break
        }
        'kubectl-karpenter;help;version' {
            break
        }
        'kubectl-karpenter;help;completion' {
            break
        }
        'kubectl-karpenter;help;help' {
            break
        }
    })

    $completions.Where{ $_.CompletionText -like "$wordToComplete*" } |
        Sort-Object -Property ListItemText
}
