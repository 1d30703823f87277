
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
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Timeout of a single API request: nothing received for this long fails it (default 60s; 0 = none)')
            [CompletionResult]::new('--kubernetes-version', '--kubernetes-version', [CompletionResultType]::ParameterName, 'Kubernetes version X.Y (default: the API server''s; offline: assumed and said so)')
            [CompletionResult]::new('--region', '--region', [CompletionResultType]::ParameterName, 'AWS region (default: the AWS environment/config, else the EKS cluster ARN)')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'AWS shared-config profile')
            [CompletionResult]::new('--cluster-name', '--cluster-name', [CompletionResultType]::ParameterName, 'EKS cluster name (default: derived from the kubeconfig; in a pod: required)')
            [CompletionResult]::new('--instance-profile', '--instance-profile', [CompletionResultType]::ParameterName, 'Instance profile of the nodes launched (default: the node class''s `instanceProfile`, else the one holding its `role`, else `aws.defaultInstanceProfile`)')
            [CompletionResult]::new('--cluster-endpoint', '--cluster-endpoint', [CompletionResultType]::ParameterName, 'API endpoint new nodes join (default: the kubeconfig''s server; in a pod: required, the EKS cluster''s endpoint)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour output (NO_COLOR is honoured under auto)')
            [CompletionResult]::new('--log-format', '--log-format', [CompletionResultType]::ParameterName, 'Stderr as text, or as one JSON object per line for log collectors')
            [CompletionResult]::new('--validate', '--validate', [CompletionResultType]::ParameterName, 'Fields of -f manifests the API server does not know: strict refuses them (=true), warn reads on with a warning, ignore (=false) reads on silently')
            [CompletionResult]::new('--no-headers', '--no-headers', [CompletionResultType]::ParameterName, 'Omit table headers')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More logging on stderr (repeatable: -v info, -vv debug; KUBECTL_KARPENTER_LOG overrides)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More logging on stderr (repeatable: -v info, -vv debug; KUBECTL_KARPENTER_LOG overrides)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Only errors on stderr')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Only errors on stderr')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('provision', 'provision', [CompletionResultType]::ParameterValue, 'Plan the capacity Karpenter would launch for pending pods')
            [CompletionResult]::new('ami', 'ami', [CompletionResultType]::ParameterValue, 'Show the AMIs each node class resolves to, and from which SSM parameter or filter')
            [CompletionResult]::new('convert', 'convert', [CompletionResultType]::ParameterValue, 'Convert v1alpha5 and v1beta1 Karpenter manifests to v1')
            [CompletionResult]::new('nodes', 'nodes', [CompletionResultType]::ParameterValue, 'Show managed nodes: pool, type, zone, capacity type, AMI, age, drift, requests vs allocatable, $/hour, the consolidation decision, and totals per pool')
            [CompletionResult]::new('drift', 'drift', [CompletionResultType]::ParameterValue, 'Detect drifted nodes and explain why (drift check)')
            [CompletionResult]::new('consolidate', 'consolidate', [CompletionResultType]::ParameterValue, 'What Karpenter''s disruption controller would do to each node (expiration, drift, emptiness, consolidation), and why not for the others; --yes carries out expiration and consolidation')
            [CompletionResult]::new('enable-drift', 'enable-drift', [CompletionResultType]::ParameterValue, 'Turn Karpenter''s drift feature on in the running controller (v0.21–v0.37)')
            [CompletionResult]::new('disable-drift', 'disable-drift', [CompletionResultType]::ParameterValue, 'Turn Karpenter''s drift feature off in the running controller (v0.21–v0.37)')
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
            [CompletionResult]::new('--min-values-policy', '--min-values-policy', [CompletionResultType]::ParameterName, 'What an unmet NodePool minValues does, as the controller''s --min-values-policy / MIN_VALUES_POLICY: Strict (the pod waits) or BestEffort (minValues relaxed, the NodeClaim annotated). Live, the running controller''s setting is the default')
            [CompletionResult]::new('--preference-policy', '--preference-policy', [CompletionResultType]::ParameterName, 'Whether pods'' preferences (preferred node and pod affinity and anti-affinity, ScheduleAnyway topology spreads) count, as the controller''s --preference-policy / PREFERENCE_POLICY: Respect (required until relaxed) or Ignore. Live, the running controller''s setting is the default')
            [CompletionResult]::new('--feature-gates', '--feature-gates', [CompletionResultType]::ParameterName, 'Feature gates, as the controller''s FEATURE_GATES (`CapacityBuffer=true` plans the CapacityBuffers'' capacity, `ReservedCapacity=false` plans and launches without capacity reservations). Live, the running controller''s gates are the default')
            [CompletionResult]::new('--vm-memory-overhead-percent', '--vm-memory-overhead-percent', [CompletionResultType]::ParameterName, 'The AWS controller''s VM_MEMORY_OVERHEAD_PERCENT (default 0.075): the memory share each instance type''s capacity loses. Live, the running controller''s is the default')
            [CompletionResult]::new('--reserved-enis', '--reserved-enis', [CompletionResultType]::ParameterName, 'The AWS controller''s RESERVED_ENIS (default 0): ENIs that give no pods. Live, the running controller''s is the default')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'How long --wait waits (e.g. 10m)')
            [CompletionResult]::new('--wait-for-lease', '--wait-for-lease', [CompletionResultType]::ParameterName, 'Wait this long for another run''s operator lease instead of refusing (default 10m; `forever`: a standby replica in a pod)')
            [CompletionResult]::new('--lease-namespace', '--lease-namespace', [CompletionResultType]::ParameterName, 'Namespace of the operator lease (a coordination.k8s.io Lease named kubectl-karpenter)')
            [CompletionResult]::new('--health-addr', '--health-addr', [CompletionResultType]::ParameterName, 'With --watch: serve /healthz (the loop runs) and /readyz (holding the operator lease, the cluster read) on this address, e.g. :8081')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The kubeconfig cluster to use')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The kubeconfig user to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace, where it applies')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace, where it applies')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Timeout of a single API request: nothing received for this long fails it (default 60s; 0 = none)')
            [CompletionResult]::new('--kubernetes-version', '--kubernetes-version', [CompletionResultType]::ParameterName, 'Kubernetes version X.Y (default: the API server''s; offline: assumed and said so)')
            [CompletionResult]::new('--region', '--region', [CompletionResultType]::ParameterName, 'AWS region (default: the AWS environment/config, else the EKS cluster ARN)')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'AWS shared-config profile')
            [CompletionResult]::new('--cluster-name', '--cluster-name', [CompletionResultType]::ParameterName, 'EKS cluster name (default: derived from the kubeconfig; in a pod: required)')
            [CompletionResult]::new('--instance-profile', '--instance-profile', [CompletionResultType]::ParameterName, 'Instance profile of the nodes launched (default: the node class''s `instanceProfile`, else the one holding its `role`, else `aws.defaultInstanceProfile`)')
            [CompletionResult]::new('--cluster-endpoint', '--cluster-endpoint', [CompletionResultType]::ParameterName, 'API endpoint new nodes join (default: the kubeconfig''s server; in a pod: required, the EKS cluster''s endpoint)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour output (NO_COLOR is honoured under auto)')
            [CompletionResult]::new('--log-format', '--log-format', [CompletionResultType]::ParameterName, 'Stderr as text, or as one JSON object per line for log collectors')
            [CompletionResult]::new('--validate', '--validate', [CompletionResultType]::ParameterName, 'Fields of -f manifests the API server does not know: strict refuses them (=true), warn reads on with a warning, ignore (=false) reads on silently')
            [CompletionResult]::new('--dry-run', '--dry-run', [CompletionResultType]::ParameterName, 'Print the plan and change nothing')
            [CompletionResult]::new('-y', '-y', [CompletionResultType]::ParameterName, 'Launch without asking (live mode)')
            [CompletionResult]::new('--yes', '--yes', [CompletionResultType]::ParameterName, 'Launch without asking (live mode)')
            [CompletionResult]::new('--wait', '--wait', [CompletionResultType]::ParameterName, 'After launching, wait until the nodes are Ready and the pods bound')
            [CompletionResult]::new('--watch', '--watch', [CompletionResultType]::ParameterName, 'Keep running: batch pending pods like Karpenter, launch, and remove empty nodes')
            [CompletionResult]::new('--force', '--force', [CompletionResultType]::ParameterName, 'Act even though an in-cluster Karpenter controller is running')
            [CompletionResult]::new('--no-headers', '--no-headers', [CompletionResultType]::ParameterName, 'Omit table headers')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More logging on stderr (repeatable: -v info, -vv debug; KUBECTL_KARPENTER_LOG overrides)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More logging on stderr (repeatable: -v info, -vv debug; KUBECTL_KARPENTER_LOG overrides)')
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
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Timeout of a single API request: nothing received for this long fails it (default 60s; 0 = none)')
            [CompletionResult]::new('--kubernetes-version', '--kubernetes-version', [CompletionResultType]::ParameterName, 'Kubernetes version X.Y (default: the API server''s; offline: assumed and said so)')
            [CompletionResult]::new('--region', '--region', [CompletionResultType]::ParameterName, 'AWS region (default: the AWS environment/config, else the EKS cluster ARN)')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'AWS shared-config profile')
            [CompletionResult]::new('--cluster-name', '--cluster-name', [CompletionResultType]::ParameterName, 'EKS cluster name (default: derived from the kubeconfig; in a pod: required)')
            [CompletionResult]::new('--instance-profile', '--instance-profile', [CompletionResultType]::ParameterName, 'Instance profile of the nodes launched (default: the node class''s `instanceProfile`, else the one holding its `role`, else `aws.defaultInstanceProfile`)')
            [CompletionResult]::new('--cluster-endpoint', '--cluster-endpoint', [CompletionResultType]::ParameterName, 'API endpoint new nodes join (default: the kubeconfig''s server; in a pod: required, the EKS cluster''s endpoint)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour output (NO_COLOR is honoured under auto)')
            [CompletionResult]::new('--log-format', '--log-format', [CompletionResultType]::ParameterName, 'Stderr as text, or as one JSON object per line for log collectors')
            [CompletionResult]::new('--validate', '--validate', [CompletionResultType]::ParameterName, 'Fields of -f manifests the API server does not know: strict refuses them (=true), warn reads on with a warning, ignore (=false) reads on silently')
            [CompletionResult]::new('--no-headers', '--no-headers', [CompletionResultType]::ParameterName, 'Omit table headers')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More logging on stderr (repeatable: -v info, -vv debug; KUBECTL_KARPENTER_LOG overrides)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More logging on stderr (repeatable: -v info, -vv debug; KUBECTL_KARPENTER_LOG overrides)')
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
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Timeout of a single API request: nothing received for this long fails it (default 60s; 0 = none)')
            [CompletionResult]::new('--kubernetes-version', '--kubernetes-version', [CompletionResultType]::ParameterName, 'Kubernetes version X.Y (default: the API server''s; offline: assumed and said so)')
            [CompletionResult]::new('--region', '--region', [CompletionResultType]::ParameterName, 'AWS region (default: the AWS environment/config, else the EKS cluster ARN)')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'AWS shared-config profile')
            [CompletionResult]::new('--cluster-name', '--cluster-name', [CompletionResultType]::ParameterName, 'EKS cluster name (default: derived from the kubeconfig; in a pod: required)')
            [CompletionResult]::new('--instance-profile', '--instance-profile', [CompletionResultType]::ParameterName, 'Instance profile of the nodes launched (default: the node class''s `instanceProfile`, else the one holding its `role`, else `aws.defaultInstanceProfile`)')
            [CompletionResult]::new('--cluster-endpoint', '--cluster-endpoint', [CompletionResultType]::ParameterName, 'API endpoint new nodes join (default: the kubeconfig''s server; in a pod: required, the EKS cluster''s endpoint)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour output (NO_COLOR is honoured under auto)')
            [CompletionResult]::new('--log-format', '--log-format', [CompletionResultType]::ParameterName, 'Stderr as text, or as one JSON object per line for log collectors')
            [CompletionResult]::new('--validate', '--validate', [CompletionResultType]::ParameterName, 'Fields of -f manifests the API server does not know: strict refuses them (=true), warn reads on with a warning, ignore (=false) reads on silently')
            [CompletionResult]::new('--no-headers', '--no-headers', [CompletionResultType]::ParameterName, 'Omit table headers')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More logging on stderr (repeatable: -v info, -vv debug; KUBECTL_KARPENTER_LOG overrides)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More logging on stderr (repeatable: -v info, -vv debug; KUBECTL_KARPENTER_LOG overrides)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Only errors on stderr')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Only errors on stderr')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-karpenter;nodes' {
            [CompletionResult]::new('-f', '-f', [CompletionResultType]::ParameterName, 'Manifest files or directories (`-` for stdin): offline mode (AWS is not asked)')
            [CompletionResult]::new('--filename', '--filename', [CompletionResultType]::ParameterName, 'Manifest files or directories (`-` for stdin): offline mode (AWS is not asked)')
            [CompletionResult]::new('--now', '--now', [CompletionResultType]::ParameterName, 'The instant evaluated (ages, the consolidation decision), RFC 3339 (default: now)')
            [CompletionResult]::new('--nodepool', '--nodepool', [CompletionResultType]::ParameterName, 'Only nodes of these NodePools (or Provisioners)')
            [CompletionResult]::new('-l', '-l', [CompletionResultType]::ParameterName, 'Only nodes matching this label selector (`k=v,k!=v,k in (a,b),k notin (a),k,!k`)')
            [CompletionResult]::new('--selector', '--selector', [CompletionResultType]::ParameterName, 'Only nodes matching this label selector (`k=v,k!=v,k in (a,b),k notin (a),k,!k`)')
            [CompletionResult]::new('--catalog', '--catalog', [CompletionResultType]::ParameterName, 'Replace the instance-type catalog used for prices (JSON or YAML, see the README)')
            [CompletionResult]::new('--feature-gates', '--feature-gates', [CompletionResultType]::ParameterName, 'Feature gates the CONSOLIDATION column decides with, as the controller''s FEATURE_GATES (`SpotToSpotConsolidation=true`, `CapacityBuffer=true`). Live, the running controller''s gates are the default')
            [CompletionResult]::new('--min-values-policy', '--min-values-policy', [CompletionResultType]::ParameterName, 'What an unmet NodePool minValues does, as the controller''s --min-values-policy / MIN_VALUES_POLICY: Strict (the pod waits) or BestEffort (minValues relaxed, the NodeClaim annotated). Live, the running controller''s setting is the default')
            [CompletionResult]::new('--preference-policy', '--preference-policy', [CompletionResultType]::ParameterName, 'Whether pods'' preferences (preferred node and pod affinity and anti-affinity, ScheduleAnyway topology spreads) count, as the controller''s --preference-policy / PREFERENCE_POLICY: Respect (required until relaxed) or Ignore. Live, the running controller''s setting is the default')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The kubeconfig cluster to use')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The kubeconfig user to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace, where it applies')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace, where it applies')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Timeout of a single API request: nothing received for this long fails it (default 60s; 0 = none)')
            [CompletionResult]::new('--kubernetes-version', '--kubernetes-version', [CompletionResultType]::ParameterName, 'Kubernetes version X.Y (default: the API server''s; offline: assumed and said so)')
            [CompletionResult]::new('--region', '--region', [CompletionResultType]::ParameterName, 'AWS region (default: the AWS environment/config, else the EKS cluster ARN)')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'AWS shared-config profile')
            [CompletionResult]::new('--cluster-name', '--cluster-name', [CompletionResultType]::ParameterName, 'EKS cluster name (default: derived from the kubeconfig; in a pod: required)')
            [CompletionResult]::new('--instance-profile', '--instance-profile', [CompletionResultType]::ParameterName, 'Instance profile of the nodes launched (default: the node class''s `instanceProfile`, else the one holding its `role`, else `aws.defaultInstanceProfile`)')
            [CompletionResult]::new('--cluster-endpoint', '--cluster-endpoint', [CompletionResultType]::ParameterName, 'API endpoint new nodes join (default: the kubeconfig''s server; in a pod: required, the EKS cluster''s endpoint)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour output (NO_COLOR is honoured under auto)')
            [CompletionResult]::new('--log-format', '--log-format', [CompletionResultType]::ParameterName, 'Stderr as text, or as one JSON object per line for log collectors')
            [CompletionResult]::new('--validate', '--validate', [CompletionResultType]::ParameterName, 'Fields of -f manifests the API server does not know: strict refuses them (=true), warn reads on with a warning, ignore (=false) reads on silently')
            [CompletionResult]::new('--no-aws', '--no-aws', [CompletionResultType]::ParameterName, 'Do not call AWS: instance facts and AMIs from the cluster only')
            [CompletionResult]::new('--no-decision', '--no-decision', [CompletionResultType]::ParameterName, 'Leave out the consolidation decision (the CONSOLIDATION column: `-`), which evaluates the whole cluster — faster on a large one')
            [CompletionResult]::new('--no-headers', '--no-headers', [CompletionResultType]::ParameterName, 'Omit table headers')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More logging on stderr (repeatable: -v info, -vv debug; KUBECTL_KARPENTER_LOG overrides)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More logging on stderr (repeatable: -v info, -vv debug; KUBECTL_KARPENTER_LOG overrides)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Only errors on stderr')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Only errors on stderr')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-karpenter;drift' {
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The kubeconfig cluster to use')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The kubeconfig user to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace, where it applies')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace, where it applies')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Timeout of a single API request: nothing received for this long fails it (default 60s; 0 = none)')
            [CompletionResult]::new('--kubernetes-version', '--kubernetes-version', [CompletionResultType]::ParameterName, 'Kubernetes version X.Y (default: the API server''s; offline: assumed and said so)')
            [CompletionResult]::new('--region', '--region', [CompletionResultType]::ParameterName, 'AWS region (default: the AWS environment/config, else the EKS cluster ARN)')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'AWS shared-config profile')
            [CompletionResult]::new('--cluster-name', '--cluster-name', [CompletionResultType]::ParameterName, 'EKS cluster name (default: derived from the kubeconfig; in a pod: required)')
            [CompletionResult]::new('--instance-profile', '--instance-profile', [CompletionResultType]::ParameterName, 'Instance profile of the nodes launched (default: the node class''s `instanceProfile`, else the one holding its `role`, else `aws.defaultInstanceProfile`)')
            [CompletionResult]::new('--cluster-endpoint', '--cluster-endpoint', [CompletionResultType]::ParameterName, 'API endpoint new nodes join (default: the kubeconfig''s server; in a pod: required, the EKS cluster''s endpoint)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour output (NO_COLOR is honoured under auto)')
            [CompletionResult]::new('--log-format', '--log-format', [CompletionResultType]::ParameterName, 'Stderr as text, or as one JSON object per line for log collectors')
            [CompletionResult]::new('--validate', '--validate', [CompletionResultType]::ParameterName, 'Fields of -f manifests the API server does not know: strict refuses them (=true), warn reads on with a warning, ignore (=false) reads on silently')
            [CompletionResult]::new('--no-headers', '--no-headers', [CompletionResultType]::ParameterName, 'Omit table headers')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More logging on stderr (repeatable: -v info, -vv debug; KUBECTL_KARPENTER_LOG overrides)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More logging on stderr (repeatable: -v info, -vv debug; KUBECTL_KARPENTER_LOG overrides)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Only errors on stderr')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Only errors on stderr')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('check', 'check', [CompletionResultType]::ParameterValue, 'Evaluate every managed node and explain why it drifted (exit 1 when any did)')
            [CompletionResult]::new('replace', 'replace', [CompletionResultType]::ParameterValue, 'Replace drifted (or named) nodes safely: replacement first, cordon, drain, terminate')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'kubectl-karpenter;drift;check' {
            [CompletionResult]::new('-f', '-f', [CompletionResultType]::ParameterName, 'Manifest files or directories (`-` for stdin): offline mode')
            [CompletionResult]::new('--filename', '--filename', [CompletionResultType]::ParameterName, 'Manifest files or directories (`-` for stdin): offline mode')
            [CompletionResult]::new('--nodepool', '--nodepool', [CompletionResultType]::ParameterName, 'Only nodes of these NodePools (or Provisioners)')
            [CompletionResult]::new('-l', '-l', [CompletionResultType]::ParameterName, 'Only nodes matching this label selector (`k=v,k!=v,k in (a,b),k notin (a),k,!k`)')
            [CompletionResult]::new('--selector', '--selector', [CompletionResultType]::ParameterName, 'Only nodes matching this label selector (`k=v,k!=v,k in (a,b),k notin (a),k,!k`)')
            [CompletionResult]::new('--ssm-param', '--ssm-param', [CompletionResultType]::ParameterName, 'Offline SSM parameter values for AMI aliases and ssmParameter terms (repeatable)')
            [CompletionResult]::new('--catalog', '--catalog', [CompletionResultType]::ParameterName, 'Replace the instance-type catalog used for InstanceTypeNotFound (JSON or YAML)')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The kubeconfig cluster to use')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The kubeconfig user to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace, where it applies')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace, where it applies')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Timeout of a single API request: nothing received for this long fails it (default 60s; 0 = none)')
            [CompletionResult]::new('--kubernetes-version', '--kubernetes-version', [CompletionResultType]::ParameterName, 'Kubernetes version X.Y (default: the API server''s; offline: assumed and said so)')
            [CompletionResult]::new('--region', '--region', [CompletionResultType]::ParameterName, 'AWS region (default: the AWS environment/config, else the EKS cluster ARN)')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'AWS shared-config profile')
            [CompletionResult]::new('--cluster-name', '--cluster-name', [CompletionResultType]::ParameterName, 'EKS cluster name (default: derived from the kubeconfig; in a pod: required)')
            [CompletionResult]::new('--instance-profile', '--instance-profile', [CompletionResultType]::ParameterName, 'Instance profile of the nodes launched (default: the node class''s `instanceProfile`, else the one holding its `role`, else `aws.defaultInstanceProfile`)')
            [CompletionResult]::new('--cluster-endpoint', '--cluster-endpoint', [CompletionResultType]::ParameterName, 'API endpoint new nodes join (default: the kubeconfig''s server; in a pod: required, the EKS cluster''s endpoint)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour output (NO_COLOR is honoured under auto)')
            [CompletionResult]::new('--log-format', '--log-format', [CompletionResultType]::ParameterName, 'Stderr as text, or as one JSON object per line for log collectors')
            [CompletionResult]::new('--validate', '--validate', [CompletionResultType]::ParameterName, 'Fields of -f manifests the API server does not know: strict refuses them (=true), warn reads on with a warning, ignore (=false) reads on silently')
            [CompletionResult]::new('--mark', '--mark', [CompletionResultType]::ParameterName, 'Write the result to the cluster (needs a cluster)')
            [CompletionResult]::new('--no-headers', '--no-headers', [CompletionResultType]::ParameterName, 'Omit table headers')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More logging on stderr (repeatable: -v info, -vv debug; KUBECTL_KARPENTER_LOG overrides)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More logging on stderr (repeatable: -v info, -vv debug; KUBECTL_KARPENTER_LOG overrides)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Only errors on stderr')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Only errors on stderr')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-karpenter;drift;replace' {
            [CompletionResult]::new('--nodepool', '--nodepool', [CompletionResultType]::ParameterName, 'Only nodes of these NodePools (or Provisioners)')
            [CompletionResult]::new('-l', '-l', [CompletionResultType]::ParameterName, 'Only nodes matching this label selector')
            [CompletionResult]::new('--selector', '--selector', [CompletionResultType]::ParameterName, 'Only nodes matching this label selector')
            [CompletionResult]::new('--max-parallel', '--max-parallel', [CompletionResultType]::ParameterName, 'At most this many nodes in replacement at once (budgets may allow fewer)')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'How long a drain may take per node (e.g. 15m)')
            [CompletionResult]::new('--ready-timeout', '--ready-timeout', [CompletionResultType]::ParameterName, 'How long a replacement may take to become Ready before rolling back')
            [CompletionResult]::new('--catalog', '--catalog', [CompletionResultType]::ParameterName, 'Replace the instance-type catalog (JSON or YAML)')
            [CompletionResult]::new('--min-values-policy', '--min-values-policy', [CompletionResultType]::ParameterName, 'What an unmet NodePool minValues does, as the controller''s --min-values-policy / MIN_VALUES_POLICY: Strict (the pod waits) or BestEffort (minValues relaxed, the NodeClaim annotated). Live, the running controller''s setting is the default')
            [CompletionResult]::new('--preference-policy', '--preference-policy', [CompletionResultType]::ParameterName, 'Whether pods'' preferences (preferred node and pod affinity and anti-affinity, ScheduleAnyway topology spreads) count, as the controller''s --preference-policy / PREFERENCE_POLICY: Respect (required until relaxed) or Ignore. Live, the running controller''s setting is the default')
            [CompletionResult]::new('--feature-gates', '--feature-gates', [CompletionResultType]::ParameterName, 'Feature gates, as the controller''s FEATURE_GATES (`CapacityBuffer=true`: the buffers'' virtual pods take their room when replacements are planned; `ReservedCapacity=false`: replacements target no capacity reservation). Default: the controller''s')
            [CompletionResult]::new('--wait-for-lease', '--wait-for-lease', [CompletionResultType]::ParameterName, 'Wait this long for another run''s operator lease instead of refusing (default 10m; `forever`: a standby replica in a pod)')
            [CompletionResult]::new('--lease-namespace', '--lease-namespace', [CompletionResultType]::ParameterName, 'Namespace of the operator lease (a coordination.k8s.io Lease named kubectl-karpenter)')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The kubeconfig cluster to use')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The kubeconfig user to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace, where it applies')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace, where it applies')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Timeout of a single API request: nothing received for this long fails it (default 60s; 0 = none)')
            [CompletionResult]::new('--kubernetes-version', '--kubernetes-version', [CompletionResultType]::ParameterName, 'Kubernetes version X.Y (default: the API server''s; offline: assumed and said so)')
            [CompletionResult]::new('--region', '--region', [CompletionResultType]::ParameterName, 'AWS region (default: the AWS environment/config, else the EKS cluster ARN)')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'AWS shared-config profile')
            [CompletionResult]::new('--cluster-name', '--cluster-name', [CompletionResultType]::ParameterName, 'EKS cluster name (default: derived from the kubeconfig; in a pod: required)')
            [CompletionResult]::new('--instance-profile', '--instance-profile', [CompletionResultType]::ParameterName, 'Instance profile of the nodes launched (default: the node class''s `instanceProfile`, else the one holding its `role`, else `aws.defaultInstanceProfile`)')
            [CompletionResult]::new('--cluster-endpoint', '--cluster-endpoint', [CompletionResultType]::ParameterName, 'API endpoint new nodes join (default: the kubeconfig''s server; in a pod: required, the EKS cluster''s endpoint)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour output (NO_COLOR is honoured under auto)')
            [CompletionResult]::new('--log-format', '--log-format', [CompletionResultType]::ParameterName, 'Stderr as text, or as one JSON object per line for log collectors')
            [CompletionResult]::new('--validate', '--validate', [CompletionResultType]::ParameterName, 'Fields of -f manifests the API server does not know: strict refuses them (=true), warn reads on with a warning, ignore (=false) reads on silently')
            [CompletionResult]::new('--dry-run', '--dry-run', [CompletionResultType]::ParameterName, 'Print the plan and change nothing')
            [CompletionResult]::new('--watch', '--watch', [CompletionResultType]::ParameterName, 'Keep replacing as nodes drift, until Ctrl-C')
            [CompletionResult]::new('-y', '-y', [CompletionResultType]::ParameterName, 'Replace without asking')
            [CompletionResult]::new('--yes', '--yes', [CompletionResultType]::ParameterName, 'Replace without asking')
            [CompletionResult]::new('--via-controller', '--via-controller', [CompletionResultType]::ParameterName, 'Let the running Karpenter controller replace the nodes: delete their NodeClaims (Machines, Nodes) one budget''s worth at a time, wait for each to be replaced')
            [CompletionResult]::new('--force', '--force', [CompletionResultType]::ParameterName, 'Act although a Karpenter controller runs, and evict do-not-disrupt pods')
            [CompletionResult]::new('--no-headers', '--no-headers', [CompletionResultType]::ParameterName, 'Omit table headers')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More logging on stderr (repeatable: -v info, -vv debug; KUBECTL_KARPENTER_LOG overrides)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More logging on stderr (repeatable: -v info, -vv debug; KUBECTL_KARPENTER_LOG overrides)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Only errors on stderr')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Only errors on stderr')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-karpenter;drift;help' {
            [CompletionResult]::new('check', 'check', [CompletionResultType]::ParameterValue, 'Evaluate every managed node and explain why it drifted (exit 1 when any did)')
            [CompletionResult]::new('replace', 'replace', [CompletionResultType]::ParameterValue, 'Replace drifted (or named) nodes safely: replacement first, cordon, drain, terminate')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'kubectl-karpenter;drift;help;check' {
            break
        }
        'kubectl-karpenter;drift;help;replace' {
            break
        }
        'kubectl-karpenter;drift;help;help' {
            break
        }
        'kubectl-karpenter;consolidate' {
            [CompletionResult]::new('-f', '-f', [CompletionResultType]::ParameterName, 'Manifest files or directories (`-` for stdin): offline mode')
            [CompletionResult]::new('--filename', '--filename', [CompletionResultType]::ParameterName, 'Manifest files or directories (`-` for stdin): offline mode')
            [CompletionResult]::new('--nodepool', '--nodepool', [CompletionResultType]::ParameterName, 'Only nodes of these NodePools (or Provisioners) in the report')
            [CompletionResult]::new('--catalog', '--catalog', [CompletionResultType]::ParameterName, 'Replace the instance-type catalog (JSON or YAML)')
            [CompletionResult]::new('--now', '--now', [CompletionResultType]::ParameterName, 'The instant evaluated, RFC 3339 (default: now)')
            [CompletionResult]::new('--feature-gates', '--feature-gates', [CompletionResultType]::ParameterName, 'Feature gates, as the controller''s FEATURE_GATES (`SpotToSpotConsolidation=true`)')
            [CompletionResult]::new('--min-values-policy', '--min-values-policy', [CompletionResultType]::ParameterName, 'What an unmet NodePool minValues does, as the controller''s --min-values-policy / MIN_VALUES_POLICY: Strict (the pod waits) or BestEffort (minValues relaxed, the NodeClaim annotated). Live, the running controller''s setting is the default')
            [CompletionResult]::new('--preference-policy', '--preference-policy', [CompletionResultType]::ParameterName, 'Whether pods'' preferences (preferred node and pod affinity and anti-affinity, ScheduleAnyway topology spreads) count, as the controller''s --preference-policy / PREFERENCE_POLICY: Respect (required until relaxed) or Ignore. Live, the running controller''s setting is the default')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'How long a node''s drain may take (also how long a PDB at zero is waited for)')
            [CompletionResult]::new('--ready-timeout', '--ready-timeout', [CompletionResultType]::ParameterName, 'How long a replacement may take to be Ready before the node is rolled back')
            [CompletionResult]::new('--wait-for-lease', '--wait-for-lease', [CompletionResultType]::ParameterName, 'Wait this long for another run''s operator lease instead of refusing (default 10m; `forever`: a standby replica in a pod)')
            [CompletionResult]::new('--lease-namespace', '--lease-namespace', [CompletionResultType]::ParameterName, 'Namespace of the operator lease (a coordination.k8s.io Lease named kubectl-karpenter)')
            [CompletionResult]::new('--health-addr', '--health-addr', [CompletionResultType]::ParameterName, 'With --watch: serve /healthz (the loop runs) and /readyz (holding the operator lease, the cluster read) on this address, e.g. :8081')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The kubeconfig cluster to use')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The kubeconfig user to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace, where it applies')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace, where it applies')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Timeout of a single API request: nothing received for this long fails it (default 60s; 0 = none)')
            [CompletionResult]::new('--kubernetes-version', '--kubernetes-version', [CompletionResultType]::ParameterName, 'Kubernetes version X.Y (default: the API server''s; offline: assumed and said so)')
            [CompletionResult]::new('--region', '--region', [CompletionResultType]::ParameterName, 'AWS region (default: the AWS environment/config, else the EKS cluster ARN)')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'AWS shared-config profile')
            [CompletionResult]::new('--cluster-name', '--cluster-name', [CompletionResultType]::ParameterName, 'EKS cluster name (default: derived from the kubeconfig; in a pod: required)')
            [CompletionResult]::new('--instance-profile', '--instance-profile', [CompletionResultType]::ParameterName, 'Instance profile of the nodes launched (default: the node class''s `instanceProfile`, else the one holding its `role`, else `aws.defaultInstanceProfile`)')
            [CompletionResult]::new('--cluster-endpoint', '--cluster-endpoint', [CompletionResultType]::ParameterName, 'API endpoint new nodes join (default: the kubeconfig''s server; in a pod: required, the EKS cluster''s endpoint)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour output (NO_COLOR is honoured under auto)')
            [CompletionResult]::new('--log-format', '--log-format', [CompletionResultType]::ParameterName, 'Stderr as text, or as one JSON object per line for log collectors')
            [CompletionResult]::new('--validate', '--validate', [CompletionResultType]::ParameterName, 'Fields of -f manifests the API server does not know: strict refuses them (=true), warn reads on with a warning, ignore (=false) reads on silently')
            [CompletionResult]::new('--dry-run', '--dry-run', [CompletionResultType]::ParameterName, 'Show what --yes would do now (the first action, node by node) and change nothing (live)')
            [CompletionResult]::new('-y', '-y', [CompletionResultType]::ParameterName, 'Carry the decisions out without asking (live): deletes and replacements through the replace pipeline, deciding again after each action')
            [CompletionResult]::new('--yes', '--yes', [CompletionResultType]::ParameterName, 'Carry the decisions out without asking (live): deletes and replacements through the replace pipeline, deciding again after each action')
            [CompletionResult]::new('--watch', '--watch', [CompletionResultType]::ParameterName, 'Keep consolidating as the cluster changes, until Ctrl-C (asks once on a terminal)')
            [CompletionResult]::new('--force', '--force', [CompletionResultType]::ParameterName, 'Act although a Karpenter controller runs (consolidation is its job there)')
            [CompletionResult]::new('--no-headers', '--no-headers', [CompletionResultType]::ParameterName, 'Omit table headers')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More logging on stderr (repeatable: -v info, -vv debug; KUBECTL_KARPENTER_LOG overrides)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More logging on stderr (repeatable: -v info, -vv debug; KUBECTL_KARPENTER_LOG overrides)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Only errors on stderr')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Only errors on stderr')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-karpenter;enable-drift' {
            [CompletionResult]::new('--karpenter-namespace', '--karpenter-namespace', [CompletionResultType]::ParameterName, 'Namespace of the Karpenter controller Deployment (default: found in any namespace; `-n` works too)')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'How long to wait for the controller''s rollout (e.g. 10m)')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The kubeconfig cluster to use')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The kubeconfig user to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace, where it applies')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace, where it applies')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Timeout of a single API request: nothing received for this long fails it (default 60s; 0 = none)')
            [CompletionResult]::new('--kubernetes-version', '--kubernetes-version', [CompletionResultType]::ParameterName, 'Kubernetes version X.Y (default: the API server''s; offline: assumed and said so)')
            [CompletionResult]::new('--region', '--region', [CompletionResultType]::ParameterName, 'AWS region (default: the AWS environment/config, else the EKS cluster ARN)')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'AWS shared-config profile')
            [CompletionResult]::new('--cluster-name', '--cluster-name', [CompletionResultType]::ParameterName, 'EKS cluster name (default: derived from the kubeconfig; in a pod: required)')
            [CompletionResult]::new('--instance-profile', '--instance-profile', [CompletionResultType]::ParameterName, 'Instance profile of the nodes launched (default: the node class''s `instanceProfile`, else the one holding its `role`, else `aws.defaultInstanceProfile`)')
            [CompletionResult]::new('--cluster-endpoint', '--cluster-endpoint', [CompletionResultType]::ParameterName, 'API endpoint new nodes join (default: the kubeconfig''s server; in a pod: required, the EKS cluster''s endpoint)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour output (NO_COLOR is honoured under auto)')
            [CompletionResult]::new('--log-format', '--log-format', [CompletionResultType]::ParameterName, 'Stderr as text, or as one JSON object per line for log collectors')
            [CompletionResult]::new('--validate', '--validate', [CompletionResultType]::ParameterName, 'Fields of -f manifests the API server does not know: strict refuses them (=true), warn reads on with a warning, ignore (=false) reads on silently')
            [CompletionResult]::new('--no-restart', '--no-restart', [CompletionResultType]::ParameterName, 'v0.21–v0.31: only edit the ConfigMap, do not restart the controller (it reads its settings at startup, so the change waits for its next restart)')
            [CompletionResult]::new('--dry-run', '--dry-run', [CompletionResultType]::ParameterName, 'Print what would change and change nothing')
            [CompletionResult]::new('-y', '-y', [CompletionResultType]::ParameterName, 'Change without asking')
            [CompletionResult]::new('--yes', '--yes', [CompletionResultType]::ParameterName, 'Change without asking')
            [CompletionResult]::new('--no-headers', '--no-headers', [CompletionResultType]::ParameterName, 'Omit table headers')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More logging on stderr (repeatable: -v info, -vv debug; KUBECTL_KARPENTER_LOG overrides)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More logging on stderr (repeatable: -v info, -vv debug; KUBECTL_KARPENTER_LOG overrides)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Only errors on stderr')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Only errors on stderr')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-karpenter;disable-drift' {
            [CompletionResult]::new('--karpenter-namespace', '--karpenter-namespace', [CompletionResultType]::ParameterName, 'Namespace of the Karpenter controller Deployment (default: found in any namespace; `-n` works too)')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'How long to wait for the controller''s rollout (e.g. 10m)')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The kubeconfig cluster to use')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The kubeconfig user to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace, where it applies')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace, where it applies')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Timeout of a single API request: nothing received for this long fails it (default 60s; 0 = none)')
            [CompletionResult]::new('--kubernetes-version', '--kubernetes-version', [CompletionResultType]::ParameterName, 'Kubernetes version X.Y (default: the API server''s; offline: assumed and said so)')
            [CompletionResult]::new('--region', '--region', [CompletionResultType]::ParameterName, 'AWS region (default: the AWS environment/config, else the EKS cluster ARN)')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'AWS shared-config profile')
            [CompletionResult]::new('--cluster-name', '--cluster-name', [CompletionResultType]::ParameterName, 'EKS cluster name (default: derived from the kubeconfig; in a pod: required)')
            [CompletionResult]::new('--instance-profile', '--instance-profile', [CompletionResultType]::ParameterName, 'Instance profile of the nodes launched (default: the node class''s `instanceProfile`, else the one holding its `role`, else `aws.defaultInstanceProfile`)')
            [CompletionResult]::new('--cluster-endpoint', '--cluster-endpoint', [CompletionResultType]::ParameterName, 'API endpoint new nodes join (default: the kubeconfig''s server; in a pod: required, the EKS cluster''s endpoint)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour output (NO_COLOR is honoured under auto)')
            [CompletionResult]::new('--log-format', '--log-format', [CompletionResultType]::ParameterName, 'Stderr as text, or as one JSON object per line for log collectors')
            [CompletionResult]::new('--validate', '--validate', [CompletionResultType]::ParameterName, 'Fields of -f manifests the API server does not know: strict refuses them (=true), warn reads on with a warning, ignore (=false) reads on silently')
            [CompletionResult]::new('--no-restart', '--no-restart', [CompletionResultType]::ParameterName, 'v0.21–v0.31: only edit the ConfigMap, do not restart the controller (it reads its settings at startup, so the change waits for its next restart)')
            [CompletionResult]::new('--dry-run', '--dry-run', [CompletionResultType]::ParameterName, 'Print what would change and change nothing')
            [CompletionResult]::new('-y', '-y', [CompletionResultType]::ParameterName, 'Change without asking')
            [CompletionResult]::new('--yes', '--yes', [CompletionResultType]::ParameterName, 'Change without asking')
            [CompletionResult]::new('--no-headers', '--no-headers', [CompletionResultType]::ParameterName, 'Omit table headers')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More logging on stderr (repeatable: -v info, -vv debug; KUBECTL_KARPENTER_LOG overrides)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More logging on stderr (repeatable: -v info, -vv debug; KUBECTL_KARPENTER_LOG overrides)')
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
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Timeout of a single API request: nothing received for this long fails it (default 60s; 0 = none)')
            [CompletionResult]::new('--kubernetes-version', '--kubernetes-version', [CompletionResultType]::ParameterName, 'Kubernetes version X.Y (default: the API server''s; offline: assumed and said so)')
            [CompletionResult]::new('--region', '--region', [CompletionResultType]::ParameterName, 'AWS region (default: the AWS environment/config, else the EKS cluster ARN)')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'AWS shared-config profile')
            [CompletionResult]::new('--cluster-name', '--cluster-name', [CompletionResultType]::ParameterName, 'EKS cluster name (default: derived from the kubeconfig; in a pod: required)')
            [CompletionResult]::new('--instance-profile', '--instance-profile', [CompletionResultType]::ParameterName, 'Instance profile of the nodes launched (default: the node class''s `instanceProfile`, else the one holding its `role`, else `aws.defaultInstanceProfile`)')
            [CompletionResult]::new('--cluster-endpoint', '--cluster-endpoint', [CompletionResultType]::ParameterName, 'API endpoint new nodes join (default: the kubeconfig''s server; in a pod: required, the EKS cluster''s endpoint)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour output (NO_COLOR is honoured under auto)')
            [CompletionResult]::new('--log-format', '--log-format', [CompletionResultType]::ParameterName, 'Stderr as text, or as one JSON object per line for log collectors')
            [CompletionResult]::new('--validate', '--validate', [CompletionResultType]::ParameterName, 'Fields of -f manifests the API server does not know: strict refuses them (=true), warn reads on with a warning, ignore (=false) reads on silently')
            [CompletionResult]::new('--no-headers', '--no-headers', [CompletionResultType]::ParameterName, 'Omit table headers')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More logging on stderr (repeatable: -v info, -vv debug; KUBECTL_KARPENTER_LOG overrides)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More logging on stderr (repeatable: -v info, -vv debug; KUBECTL_KARPENTER_LOG overrides)')
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
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Timeout of a single API request: nothing received for this long fails it (default 60s; 0 = none)')
            [CompletionResult]::new('--kubernetes-version', '--kubernetes-version', [CompletionResultType]::ParameterName, 'Kubernetes version X.Y (default: the API server''s; offline: assumed and said so)')
            [CompletionResult]::new('--region', '--region', [CompletionResultType]::ParameterName, 'AWS region (default: the AWS environment/config, else the EKS cluster ARN)')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'AWS shared-config profile')
            [CompletionResult]::new('--cluster-name', '--cluster-name', [CompletionResultType]::ParameterName, 'EKS cluster name (default: derived from the kubeconfig; in a pod: required)')
            [CompletionResult]::new('--instance-profile', '--instance-profile', [CompletionResultType]::ParameterName, 'Instance profile of the nodes launched (default: the node class''s `instanceProfile`, else the one holding its `role`, else `aws.defaultInstanceProfile`)')
            [CompletionResult]::new('--cluster-endpoint', '--cluster-endpoint', [CompletionResultType]::ParameterName, 'API endpoint new nodes join (default: the kubeconfig''s server; in a pod: required, the EKS cluster''s endpoint)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour output (NO_COLOR is honoured under auto)')
            [CompletionResult]::new('--log-format', '--log-format', [CompletionResultType]::ParameterName, 'Stderr as text, or as one JSON object per line for log collectors')
            [CompletionResult]::new('--validate', '--validate', [CompletionResultType]::ParameterName, 'Fields of -f manifests the API server does not know: strict refuses them (=true), warn reads on with a warning, ignore (=false) reads on silently')
            [CompletionResult]::new('--no-headers', '--no-headers', [CompletionResultType]::ParameterName, 'Omit table headers')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More logging on stderr (repeatable: -v info, -vv debug; KUBECTL_KARPENTER_LOG overrides)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More logging on stderr (repeatable: -v info, -vv debug; KUBECTL_KARPENTER_LOG overrides)')
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
            [CompletionResult]::new('nodes', 'nodes', [CompletionResultType]::ParameterValue, 'Show managed nodes: pool, type, zone, capacity type, AMI, age, drift, requests vs allocatable, $/hour, the consolidation decision, and totals per pool')
            [CompletionResult]::new('drift', 'drift', [CompletionResultType]::ParameterValue, 'Detect drifted nodes and explain why (drift check)')
            [CompletionResult]::new('consolidate', 'consolidate', [CompletionResultType]::ParameterValue, 'What Karpenter''s disruption controller would do to each node (expiration, drift, emptiness, consolidation), and why not for the others; --yes carries out expiration and consolidation')
            [CompletionResult]::new('enable-drift', 'enable-drift', [CompletionResultType]::ParameterValue, 'Turn Karpenter''s drift feature on in the running controller (v0.21–v0.37)')
            [CompletionResult]::new('disable-drift', 'disable-drift', [CompletionResultType]::ParameterValue, 'Turn Karpenter''s drift feature off in the running controller (v0.21–v0.37)')
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
        'kubectl-karpenter;help;nodes' {
            break
        }
        'kubectl-karpenter;help;drift' {
            [CompletionResult]::new('check', 'check', [CompletionResultType]::ParameterValue, 'Evaluate every managed node and explain why it drifted (exit 1 when any did)')
            [CompletionResult]::new('replace', 'replace', [CompletionResultType]::ParameterValue, 'Replace drifted (or named) nodes safely: replacement first, cordon, drain, terminate')
            break
        }
        'kubectl-karpenter;help;drift;check' {
            break
        }
        'kubectl-karpenter;help;drift;replace' {
            break
        }
        'kubectl-karpenter;help;consolidate' {
            break
        }
        'kubectl-karpenter;help;enable-drift' {
            break
        }
        'kubectl-karpenter;help;disable-drift' {
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
