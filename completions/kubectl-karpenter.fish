# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_kubectl_karpenter_global_optspecs
    string join \n kubeconfig= context= cluster= user= n/namespace= request-timeout= kubernetes-version= region= profile= cluster-name= instance-profile= cluster-endpoint= o/output= no-headers color= v/verbose q/quiet log-format= validate= h/help V/version
end

function __fish_kubectl_karpenter_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_kubectl_karpenter_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_kubectl_karpenter_using_subcommand
    set -l cmd (__fish_kubectl_karpenter_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_needs_command" -l kubeconfig -d 'Path to the kubeconfig file' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_needs_command" -l context -d 'The kubeconfig context to use' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_needs_command" -l cluster -d 'The kubeconfig cluster to use' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_needs_command" -l user -d 'The kubeconfig user to use' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_needs_command" -s n -l namespace -d 'Namespace, where it applies' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_needs_command" -l request-timeout -d 'Timeout of a single API request: nothing received for this long fails it (default 60s; 0 = none)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_needs_command" -l kubernetes-version -d 'Kubernetes version X.Y (default: the API server\'s; offline: assumed and said so)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_needs_command" -l region -d 'AWS region (default: the AWS environment/config, else the EKS cluster ARN)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_needs_command" -l profile -d 'AWS shared-config profile' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_needs_command" -l cluster-name -d 'EKS cluster name (default: derived from the kubeconfig; in a pod: required)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_needs_command" -l instance-profile -d 'Instance profile of the nodes launched (default: the node class\'s `instanceProfile`, else the one holding its `role`, else `aws.defaultInstanceProfile`)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_needs_command" -l cluster-endpoint -d 'API endpoint new nodes join (default: the kubeconfig\'s server; in a pod: required, the EKS cluster\'s endpoint)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_needs_command" -s o -l output -d 'Output format' -r -f -a "table\t'Aligned columns'
wide\t'Columns with more detail'
json\t'The versioned JSON document'
yaml\t'The versioned YAML document'
name\t'One `kind/name` per line'"
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_needs_command" -l color -d 'Colour output (NO_COLOR is honoured under auto)' -r -f -a "auto\t'Only on a terminal, and never with `NO_COLOR`'
always\t'Always'
never\t'Never'"
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_needs_command" -l log-format -d 'Stderr as text, or as one JSON object per line for log collectors' -r -f -a "text\t'For people: `-v` lines as text'
json\t'For log collectors: one JSON object per line (timestamp, level, target, message, fields), the tool\'s own stderr lines included'"
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_needs_command" -l validate -d 'Fields of -f manifests the API server does not know: strict refuses them (=true), warn reads on with a warning, ignore (=false) reads on silently' -r -f -a "strict\t'Refuse the input, naming the field (and the closest known one)'
warn\t'Warn on stderr and read on'
ignore\t'Read on silently'"
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_needs_command" -l no-headers -d 'Omit table headers'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_needs_command" -s v -l verbose -d 'More logging on stderr (repeatable: -v info, -vv debug; KUBECTL_KARPENTER_LOG overrides)'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_needs_command" -s q -l quiet -d 'Only errors on stderr'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_needs_command" -s V -l version -d 'Print version'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_needs_command" -f -a "provision" -d 'Plan the capacity Karpenter would launch for pending pods'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_needs_command" -f -a "ami" -d 'Show the AMIs each node class resolves to, and from which SSM parameter or filter'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_needs_command" -f -a "convert" -d 'Convert v1alpha5 and v1beta1 Karpenter manifests to v1'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_needs_command" -f -a "nodes" -d 'Show managed nodes: pool, type, zone, capacity type, AMI, age, drift, requests vs allocatable, $/hour, the consolidation decision, and totals per pool'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_needs_command" -f -a "drift" -d 'Detect drifted nodes and explain why (drift check)'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_needs_command" -f -a "consolidate" -d 'What Karpenter\'s disruption controller would do to each node (expiration, drift, emptiness, consolidation), and why not for the others; --yes carries out expiration and consolidation'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_needs_command" -f -a "enable-drift" -d 'Turn Karpenter\'s drift feature on in the running controller (v0.21–v0.37)'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_needs_command" -f -a "disable-drift" -d 'Turn Karpenter\'s drift feature off in the running controller (v0.21–v0.37)'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_needs_command" -f -a "version" -d 'Print the version'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_needs_command" -f -a "completion" -d 'Print a shell completion script (bash, zsh, fish, powershell)'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand provision" -s f -l filename -d 'Manifest files or directories (`-` for stdin): offline mode' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand provision" -l nodepool -d 'Only consider these NodePools (or Provisioners)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand provision" -l catalog -d 'Replace the instance-type catalog (JSON or YAML, see the README)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand provision" -l max-instance-types -d 'Keep at most this many instance types per NodeClaim (Karpenter: 600)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand provision" -l min-values-policy -d 'What an unmet NodePool minValues does, as the controller\'s --min-values-policy / MIN_VALUES_POLICY: Strict (the pod waits) or BestEffort (minValues relaxed, the NodeClaim annotated). Live, the running controller\'s setting is the default' -r -f -a "Strict\t''
BestEffort\t''"
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand provision" -l preference-policy -d 'Whether pods\' preferences (preferred node and pod affinity and anti-affinity, ScheduleAnyway topology spreads) count, as the controller\'s --preference-policy / PREFERENCE_POLICY: Respect (required until relaxed) or Ignore. Live, the running controller\'s setting is the default' -r -f -a "Respect\t''
Ignore\t''"
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand provision" -l feature-gates -d 'Feature gates, as the controller\'s FEATURE_GATES (`CapacityBuffer=true` plans the CapacityBuffers\' capacity, `ReservedCapacity=false` plans and launches without capacity reservations). Live, the running controller\'s gates are the default' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand provision" -l vm-memory-overhead-percent -d 'The AWS controller\'s VM_MEMORY_OVERHEAD_PERCENT (default 0.075): the memory share each instance type\'s capacity loses. Live, the running controller\'s is the default' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand provision" -l reserved-enis -d 'The AWS controller\'s RESERVED_ENIS (default 0): ENIs that give no pods. Live, the running controller\'s is the default' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand provision" -l timeout -d 'How long --wait waits (e.g. 10m)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand provision" -l wait-for-lease -d 'Wait this long for another run\'s operator lease instead of refusing (default 10m; `forever`: a standby replica in a pod)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand provision" -l lease-namespace -d 'Namespace of the operator lease (a coordination.k8s.io Lease named kubectl-karpenter)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand provision" -l health-addr -d 'With --watch: serve /healthz (the loop runs) and /readyz (holding the operator lease, the cluster read) on this address, e.g. :8081' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand provision" -l kubeconfig -d 'Path to the kubeconfig file' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand provision" -l context -d 'The kubeconfig context to use' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand provision" -l cluster -d 'The kubeconfig cluster to use' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand provision" -l user -d 'The kubeconfig user to use' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand provision" -s n -l namespace -d 'Namespace, where it applies' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand provision" -l request-timeout -d 'Timeout of a single API request: nothing received for this long fails it (default 60s; 0 = none)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand provision" -l kubernetes-version -d 'Kubernetes version X.Y (default: the API server\'s; offline: assumed and said so)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand provision" -l region -d 'AWS region (default: the AWS environment/config, else the EKS cluster ARN)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand provision" -l profile -d 'AWS shared-config profile' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand provision" -l cluster-name -d 'EKS cluster name (default: derived from the kubeconfig; in a pod: required)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand provision" -l instance-profile -d 'Instance profile of the nodes launched (default: the node class\'s `instanceProfile`, else the one holding its `role`, else `aws.defaultInstanceProfile`)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand provision" -l cluster-endpoint -d 'API endpoint new nodes join (default: the kubeconfig\'s server; in a pod: required, the EKS cluster\'s endpoint)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand provision" -s o -l output -d 'Output format' -r -f -a "table\t'Aligned columns'
wide\t'Columns with more detail'
json\t'The versioned JSON document'
yaml\t'The versioned YAML document'
name\t'One `kind/name` per line'"
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand provision" -l color -d 'Colour output (NO_COLOR is honoured under auto)' -r -f -a "auto\t'Only on a terminal, and never with `NO_COLOR`'
always\t'Always'
never\t'Never'"
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand provision" -l log-format -d 'Stderr as text, or as one JSON object per line for log collectors' -r -f -a "text\t'For people: `-v` lines as text'
json\t'For log collectors: one JSON object per line (timestamp, level, target, message, fields), the tool\'s own stderr lines included'"
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand provision" -l validate -d 'Fields of -f manifests the API server does not know: strict refuses them (=true), warn reads on with a warning, ignore (=false) reads on silently' -r -f -a "strict\t'Refuse the input, naming the field (and the closest known one)'
warn\t'Warn on stderr and read on'
ignore\t'Read on silently'"
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand provision" -l dry-run -d 'Print the plan and change nothing'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand provision" -s y -l yes -d 'Launch without asking (live mode)'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand provision" -l wait -d 'After launching, wait until the nodes are Ready and the pods bound'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand provision" -l watch -d 'Keep running: batch pending pods like Karpenter, launch, and remove empty nodes'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand provision" -l force -d 'Act even though an in-cluster Karpenter controller is running'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand provision" -l no-headers -d 'Omit table headers'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand provision" -s v -l verbose -d 'More logging on stderr (repeatable: -v info, -vv debug; KUBECTL_KARPENTER_LOG overrides)'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand provision" -s q -l quiet -d 'Only errors on stderr'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand provision" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand provision" -s V -l version -d 'Print version'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand ami" -s f -l filename -d 'Manifest files or directories (`-` for stdin) holding the node classes' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand ami" -l kubeconfig -d 'Path to the kubeconfig file' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand ami" -l context -d 'The kubeconfig context to use' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand ami" -l cluster -d 'The kubeconfig cluster to use' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand ami" -l user -d 'The kubeconfig user to use' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand ami" -s n -l namespace -d 'Namespace, where it applies' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand ami" -l request-timeout -d 'Timeout of a single API request: nothing received for this long fails it (default 60s; 0 = none)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand ami" -l kubernetes-version -d 'Kubernetes version X.Y (default: the API server\'s; offline: assumed and said so)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand ami" -l region -d 'AWS region (default: the AWS environment/config, else the EKS cluster ARN)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand ami" -l profile -d 'AWS shared-config profile' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand ami" -l cluster-name -d 'EKS cluster name (default: derived from the kubeconfig; in a pod: required)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand ami" -l instance-profile -d 'Instance profile of the nodes launched (default: the node class\'s `instanceProfile`, else the one holding its `role`, else `aws.defaultInstanceProfile`)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand ami" -l cluster-endpoint -d 'API endpoint new nodes join (default: the kubeconfig\'s server; in a pod: required, the EKS cluster\'s endpoint)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand ami" -s o -l output -d 'Output format' -r -f -a "table\t'Aligned columns'
wide\t'Columns with more detail'
json\t'The versioned JSON document'
yaml\t'The versioned YAML document'
name\t'One `kind/name` per line'"
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand ami" -l color -d 'Colour output (NO_COLOR is honoured under auto)' -r -f -a "auto\t'Only on a terminal, and never with `NO_COLOR`'
always\t'Always'
never\t'Never'"
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand ami" -l log-format -d 'Stderr as text, or as one JSON object per line for log collectors' -r -f -a "text\t'For people: `-v` lines as text'
json\t'For log collectors: one JSON object per line (timestamp, level, target, message, fields), the tool\'s own stderr lines included'"
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand ami" -l validate -d 'Fields of -f manifests the API server does not know: strict refuses them (=true), warn reads on with a warning, ignore (=false) reads on silently' -r -f -a "strict\t'Refuse the input, naming the field (and the closest known one)'
warn\t'Warn on stderr and read on'
ignore\t'Read on silently'"
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand ami" -l no-headers -d 'Omit table headers'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand ami" -s v -l verbose -d 'More logging on stderr (repeatable: -v info, -vv debug; KUBECTL_KARPENTER_LOG overrides)'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand ami" -s q -l quiet -d 'Only errors on stderr'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand ami" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand ami" -s V -l version -d 'Print version'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand convert" -s f -l filename -d 'Manifest files or directories (`-` for stdin)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand convert" -l to -d 'Target API version' -r -f -a "v1\t''"
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand convert" -l kubeconfig -d 'Path to the kubeconfig file' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand convert" -l context -d 'The kubeconfig context to use' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand convert" -l cluster -d 'The kubeconfig cluster to use' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand convert" -l user -d 'The kubeconfig user to use' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand convert" -s n -l namespace -d 'Namespace, where it applies' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand convert" -l request-timeout -d 'Timeout of a single API request: nothing received for this long fails it (default 60s; 0 = none)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand convert" -l kubernetes-version -d 'Kubernetes version X.Y (default: the API server\'s; offline: assumed and said so)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand convert" -l region -d 'AWS region (default: the AWS environment/config, else the EKS cluster ARN)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand convert" -l profile -d 'AWS shared-config profile' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand convert" -l cluster-name -d 'EKS cluster name (default: derived from the kubeconfig; in a pod: required)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand convert" -l instance-profile -d 'Instance profile of the nodes launched (default: the node class\'s `instanceProfile`, else the one holding its `role`, else `aws.defaultInstanceProfile`)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand convert" -l cluster-endpoint -d 'API endpoint new nodes join (default: the kubeconfig\'s server; in a pod: required, the EKS cluster\'s endpoint)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand convert" -s o -l output -d 'Output format' -r -f -a "table\t'Aligned columns'
wide\t'Columns with more detail'
json\t'The versioned JSON document'
yaml\t'The versioned YAML document'
name\t'One `kind/name` per line'"
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand convert" -l color -d 'Colour output (NO_COLOR is honoured under auto)' -r -f -a "auto\t'Only on a terminal, and never with `NO_COLOR`'
always\t'Always'
never\t'Never'"
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand convert" -l log-format -d 'Stderr as text, or as one JSON object per line for log collectors' -r -f -a "text\t'For people: `-v` lines as text'
json\t'For log collectors: one JSON object per line (timestamp, level, target, message, fields), the tool\'s own stderr lines included'"
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand convert" -l validate -d 'Fields of -f manifests the API server does not know: strict refuses them (=true), warn reads on with a warning, ignore (=false) reads on silently' -r -f -a "strict\t'Refuse the input, naming the field (and the closest known one)'
warn\t'Warn on stderr and read on'
ignore\t'Read on silently'"
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand convert" -l no-headers -d 'Omit table headers'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand convert" -s v -l verbose -d 'More logging on stderr (repeatable: -v info, -vv debug; KUBECTL_KARPENTER_LOG overrides)'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand convert" -s q -l quiet -d 'Only errors on stderr'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand convert" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand convert" -s V -l version -d 'Print version'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand nodes" -s f -l filename -d 'Manifest files or directories (`-` for stdin): offline mode (AWS is not asked)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand nodes" -l now -d 'The instant evaluated (ages, the consolidation decision), RFC 3339 (default: now)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand nodes" -l nodepool -d 'Only nodes of these NodePools (or Provisioners)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand nodes" -s l -l selector -d 'Only nodes matching this label selector (`k=v,k!=v,k in (a,b),k notin (a),k,!k`)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand nodes" -l catalog -d 'Replace the instance-type catalog used for prices (JSON or YAML, see the README)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand nodes" -l feature-gates -d 'Feature gates the CONSOLIDATION column decides with, as the controller\'s FEATURE_GATES (`SpotToSpotConsolidation=true`, `CapacityBuffer=true`, `ReservedCapacity=false`). Live, the running controller\'s gates are the default' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand nodes" -l min-values-policy -d 'What an unmet NodePool minValues does, as the controller\'s --min-values-policy / MIN_VALUES_POLICY: Strict (the pod waits) or BestEffort (minValues relaxed, the NodeClaim annotated). Live, the running controller\'s setting is the default' -r -f -a "Strict\t''
BestEffort\t''"
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand nodes" -l preference-policy -d 'Whether pods\' preferences (preferred node and pod affinity and anti-affinity, ScheduleAnyway topology spreads) count, as the controller\'s --preference-policy / PREFERENCE_POLICY: Respect (required until relaxed) or Ignore. Live, the running controller\'s setting is the default' -r -f -a "Respect\t''
Ignore\t''"
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand nodes" -l vm-memory-overhead-percent -d 'The AWS controller\'s VM_MEMORY_OVERHEAD_PERCENT (default 0.075): the memory share each instance type\'s capacity loses. Live, the running controller\'s is the default' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand nodes" -l reserved-enis -d 'The AWS controller\'s RESERVED_ENIS (default 0): ENIs that give no pods. Live, the running controller\'s is the default' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand nodes" -l kubeconfig -d 'Path to the kubeconfig file' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand nodes" -l context -d 'The kubeconfig context to use' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand nodes" -l cluster -d 'The kubeconfig cluster to use' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand nodes" -l user -d 'The kubeconfig user to use' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand nodes" -s n -l namespace -d 'Namespace, where it applies' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand nodes" -l request-timeout -d 'Timeout of a single API request: nothing received for this long fails it (default 60s; 0 = none)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand nodes" -l kubernetes-version -d 'Kubernetes version X.Y (default: the API server\'s; offline: assumed and said so)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand nodes" -l region -d 'AWS region (default: the AWS environment/config, else the EKS cluster ARN)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand nodes" -l profile -d 'AWS shared-config profile' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand nodes" -l cluster-name -d 'EKS cluster name (default: derived from the kubeconfig; in a pod: required)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand nodes" -l instance-profile -d 'Instance profile of the nodes launched (default: the node class\'s `instanceProfile`, else the one holding its `role`, else `aws.defaultInstanceProfile`)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand nodes" -l cluster-endpoint -d 'API endpoint new nodes join (default: the kubeconfig\'s server; in a pod: required, the EKS cluster\'s endpoint)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand nodes" -s o -l output -d 'Output format' -r -f -a "table\t'Aligned columns'
wide\t'Columns with more detail'
json\t'The versioned JSON document'
yaml\t'The versioned YAML document'
name\t'One `kind/name` per line'"
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand nodes" -l color -d 'Colour output (NO_COLOR is honoured under auto)' -r -f -a "auto\t'Only on a terminal, and never with `NO_COLOR`'
always\t'Always'
never\t'Never'"
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand nodes" -l log-format -d 'Stderr as text, or as one JSON object per line for log collectors' -r -f -a "text\t'For people: `-v` lines as text'
json\t'For log collectors: one JSON object per line (timestamp, level, target, message, fields), the tool\'s own stderr lines included'"
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand nodes" -l validate -d 'Fields of -f manifests the API server does not know: strict refuses them (=true), warn reads on with a warning, ignore (=false) reads on silently' -r -f -a "strict\t'Refuse the input, naming the field (and the closest known one)'
warn\t'Warn on stderr and read on'
ignore\t'Read on silently'"
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand nodes" -l no-aws -d 'Do not call AWS: instance facts and AMIs from the cluster only'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand nodes" -l no-decision -d 'Leave out the consolidation decision (the CONSOLIDATION column: `-`), which evaluates the whole cluster — faster on a large one'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand nodes" -l no-headers -d 'Omit table headers'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand nodes" -s v -l verbose -d 'More logging on stderr (repeatable: -v info, -vv debug; KUBECTL_KARPENTER_LOG overrides)'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand nodes" -s q -l quiet -d 'Only errors on stderr'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand nodes" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand nodes" -s V -l version -d 'Print version'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand drift; and not __fish_seen_subcommand_from check replace help" -l kubeconfig -d 'Path to the kubeconfig file' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand drift; and not __fish_seen_subcommand_from check replace help" -l context -d 'The kubeconfig context to use' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand drift; and not __fish_seen_subcommand_from check replace help" -l cluster -d 'The kubeconfig cluster to use' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand drift; and not __fish_seen_subcommand_from check replace help" -l user -d 'The kubeconfig user to use' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand drift; and not __fish_seen_subcommand_from check replace help" -s n -l namespace -d 'Namespace, where it applies' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand drift; and not __fish_seen_subcommand_from check replace help" -l request-timeout -d 'Timeout of a single API request: nothing received for this long fails it (default 60s; 0 = none)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand drift; and not __fish_seen_subcommand_from check replace help" -l kubernetes-version -d 'Kubernetes version X.Y (default: the API server\'s; offline: assumed and said so)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand drift; and not __fish_seen_subcommand_from check replace help" -l region -d 'AWS region (default: the AWS environment/config, else the EKS cluster ARN)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand drift; and not __fish_seen_subcommand_from check replace help" -l profile -d 'AWS shared-config profile' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand drift; and not __fish_seen_subcommand_from check replace help" -l cluster-name -d 'EKS cluster name (default: derived from the kubeconfig; in a pod: required)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand drift; and not __fish_seen_subcommand_from check replace help" -l instance-profile -d 'Instance profile of the nodes launched (default: the node class\'s `instanceProfile`, else the one holding its `role`, else `aws.defaultInstanceProfile`)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand drift; and not __fish_seen_subcommand_from check replace help" -l cluster-endpoint -d 'API endpoint new nodes join (default: the kubeconfig\'s server; in a pod: required, the EKS cluster\'s endpoint)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand drift; and not __fish_seen_subcommand_from check replace help" -s o -l output -d 'Output format' -r -f -a "table\t'Aligned columns'
wide\t'Columns with more detail'
json\t'The versioned JSON document'
yaml\t'The versioned YAML document'
name\t'One `kind/name` per line'"
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand drift; and not __fish_seen_subcommand_from check replace help" -l color -d 'Colour output (NO_COLOR is honoured under auto)' -r -f -a "auto\t'Only on a terminal, and never with `NO_COLOR`'
always\t'Always'
never\t'Never'"
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand drift; and not __fish_seen_subcommand_from check replace help" -l log-format -d 'Stderr as text, or as one JSON object per line for log collectors' -r -f -a "text\t'For people: `-v` lines as text'
json\t'For log collectors: one JSON object per line (timestamp, level, target, message, fields), the tool\'s own stderr lines included'"
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand drift; and not __fish_seen_subcommand_from check replace help" -l validate -d 'Fields of -f manifests the API server does not know: strict refuses them (=true), warn reads on with a warning, ignore (=false) reads on silently' -r -f -a "strict\t'Refuse the input, naming the field (and the closest known one)'
warn\t'Warn on stderr and read on'
ignore\t'Read on silently'"
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand drift; and not __fish_seen_subcommand_from check replace help" -l no-headers -d 'Omit table headers'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand drift; and not __fish_seen_subcommand_from check replace help" -s v -l verbose -d 'More logging on stderr (repeatable: -v info, -vv debug; KUBECTL_KARPENTER_LOG overrides)'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand drift; and not __fish_seen_subcommand_from check replace help" -s q -l quiet -d 'Only errors on stderr'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand drift; and not __fish_seen_subcommand_from check replace help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand drift; and not __fish_seen_subcommand_from check replace help" -s V -l version -d 'Print version'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand drift; and not __fish_seen_subcommand_from check replace help" -f -a "check" -d 'Evaluate every managed node and explain why it drifted (exit 1 when any did)'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand drift; and not __fish_seen_subcommand_from check replace help" -f -a "replace" -d 'Replace drifted (or named) nodes safely: replacement first, cordon, drain, terminate'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand drift; and not __fish_seen_subcommand_from check replace help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand drift; and __fish_seen_subcommand_from check" -s f -l filename -d 'Manifest files or directories (`-` for stdin): offline mode' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand drift; and __fish_seen_subcommand_from check" -l nodepool -d 'Only nodes of these NodePools (or Provisioners)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand drift; and __fish_seen_subcommand_from check" -s l -l selector -d 'Only nodes matching this label selector (`k=v,k!=v,k in (a,b),k notin (a),k,!k`)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand drift; and __fish_seen_subcommand_from check" -l ssm-param -d 'Offline SSM parameter values for AMI aliases and ssmParameter terms (repeatable)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand drift; and __fish_seen_subcommand_from check" -l catalog -d 'Replace the instance-type catalog used for InstanceTypeNotFound (JSON or YAML)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand drift; and __fish_seen_subcommand_from check" -l kubeconfig -d 'Path to the kubeconfig file' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand drift; and __fish_seen_subcommand_from check" -l context -d 'The kubeconfig context to use' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand drift; and __fish_seen_subcommand_from check" -l cluster -d 'The kubeconfig cluster to use' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand drift; and __fish_seen_subcommand_from check" -l user -d 'The kubeconfig user to use' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand drift; and __fish_seen_subcommand_from check" -s n -l namespace -d 'Namespace, where it applies' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand drift; and __fish_seen_subcommand_from check" -l request-timeout -d 'Timeout of a single API request: nothing received for this long fails it (default 60s; 0 = none)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand drift; and __fish_seen_subcommand_from check" -l kubernetes-version -d 'Kubernetes version X.Y (default: the API server\'s; offline: assumed and said so)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand drift; and __fish_seen_subcommand_from check" -l region -d 'AWS region (default: the AWS environment/config, else the EKS cluster ARN)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand drift; and __fish_seen_subcommand_from check" -l profile -d 'AWS shared-config profile' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand drift; and __fish_seen_subcommand_from check" -l cluster-name -d 'EKS cluster name (default: derived from the kubeconfig; in a pod: required)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand drift; and __fish_seen_subcommand_from check" -l instance-profile -d 'Instance profile of the nodes launched (default: the node class\'s `instanceProfile`, else the one holding its `role`, else `aws.defaultInstanceProfile`)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand drift; and __fish_seen_subcommand_from check" -l cluster-endpoint -d 'API endpoint new nodes join (default: the kubeconfig\'s server; in a pod: required, the EKS cluster\'s endpoint)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand drift; and __fish_seen_subcommand_from check" -s o -l output -d 'Output format' -r -f -a "table\t'Aligned columns'
wide\t'Columns with more detail'
json\t'The versioned JSON document'
yaml\t'The versioned YAML document'
name\t'One `kind/name` per line'"
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand drift; and __fish_seen_subcommand_from check" -l color -d 'Colour output (NO_COLOR is honoured under auto)' -r -f -a "auto\t'Only on a terminal, and never with `NO_COLOR`'
always\t'Always'
never\t'Never'"
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand drift; and __fish_seen_subcommand_from check" -l log-format -d 'Stderr as text, or as one JSON object per line for log collectors' -r -f -a "text\t'For people: `-v` lines as text'
json\t'For log collectors: one JSON object per line (timestamp, level, target, message, fields), the tool\'s own stderr lines included'"
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand drift; and __fish_seen_subcommand_from check" -l validate -d 'Fields of -f manifests the API server does not know: strict refuses them (=true), warn reads on with a warning, ignore (=false) reads on silently' -r -f -a "strict\t'Refuse the input, naming the field (and the closest known one)'
warn\t'Warn on stderr and read on'
ignore\t'Read on silently'"
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand drift; and __fish_seen_subcommand_from check" -l mark -d 'Write the result to the cluster (needs a cluster)'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand drift; and __fish_seen_subcommand_from check" -l dry-run -d 'With --mark: say which nodes\' markers would change and write nothing (drift check itself changes nothing)'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand drift; and __fish_seen_subcommand_from check" -l no-headers -d 'Omit table headers'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand drift; and __fish_seen_subcommand_from check" -s v -l verbose -d 'More logging on stderr (repeatable: -v info, -vv debug; KUBECTL_KARPENTER_LOG overrides)'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand drift; and __fish_seen_subcommand_from check" -s q -l quiet -d 'Only errors on stderr'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand drift; and __fish_seen_subcommand_from check" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand drift; and __fish_seen_subcommand_from check" -s V -l version -d 'Print version'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand drift; and __fish_seen_subcommand_from replace" -l nodepool -d 'Only nodes of these NodePools (or Provisioners)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand drift; and __fish_seen_subcommand_from replace" -s l -l selector -d 'Only nodes matching this label selector' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand drift; and __fish_seen_subcommand_from replace" -l max-parallel -d 'At most this many nodes in replacement at once (budgets may allow fewer)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand drift; and __fish_seen_subcommand_from replace" -l timeout -d 'How long a drain may take per node (e.g. 15m)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand drift; and __fish_seen_subcommand_from replace" -l ready-timeout -d 'How long a replacement may take to become Ready before rolling back' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand drift; and __fish_seen_subcommand_from replace" -l catalog -d 'Replace the instance-type catalog (JSON or YAML)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand drift; and __fish_seen_subcommand_from replace" -l min-values-policy -d 'What an unmet NodePool minValues does, as the controller\'s --min-values-policy / MIN_VALUES_POLICY: Strict (the pod waits) or BestEffort (minValues relaxed, the NodeClaim annotated). Live, the running controller\'s setting is the default' -r -f -a "Strict\t''
BestEffort\t''"
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand drift; and __fish_seen_subcommand_from replace" -l preference-policy -d 'Whether pods\' preferences (preferred node and pod affinity and anti-affinity, ScheduleAnyway topology spreads) count, as the controller\'s --preference-policy / PREFERENCE_POLICY: Respect (required until relaxed) or Ignore. Live, the running controller\'s setting is the default' -r -f -a "Respect\t''
Ignore\t''"
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand drift; and __fish_seen_subcommand_from replace" -l feature-gates -d 'Feature gates, as the controller\'s FEATURE_GATES (`CapacityBuffer=true`: the buffers\' virtual pods take their room when replacements are planned; `ReservedCapacity=false`: replacements target no capacity reservation). Default: the controller\'s' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand drift; and __fish_seen_subcommand_from replace" -l vm-memory-overhead-percent -d 'The AWS controller\'s VM_MEMORY_OVERHEAD_PERCENT (default 0.075): the memory share each instance type\'s capacity loses. Live, the running controller\'s is the default' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand drift; and __fish_seen_subcommand_from replace" -l reserved-enis -d 'The AWS controller\'s RESERVED_ENIS (default 0): ENIs that give no pods. Live, the running controller\'s is the default' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand drift; and __fish_seen_subcommand_from replace" -l wait-for-lease -d 'Wait this long for another run\'s operator lease instead of refusing (default 10m; `forever`: a standby replica in a pod)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand drift; and __fish_seen_subcommand_from replace" -l lease-namespace -d 'Namespace of the operator lease (a coordination.k8s.io Lease named kubectl-karpenter)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand drift; and __fish_seen_subcommand_from replace" -l kubeconfig -d 'Path to the kubeconfig file' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand drift; and __fish_seen_subcommand_from replace" -l context -d 'The kubeconfig context to use' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand drift; and __fish_seen_subcommand_from replace" -l cluster -d 'The kubeconfig cluster to use' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand drift; and __fish_seen_subcommand_from replace" -l user -d 'The kubeconfig user to use' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand drift; and __fish_seen_subcommand_from replace" -s n -l namespace -d 'Namespace, where it applies' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand drift; and __fish_seen_subcommand_from replace" -l request-timeout -d 'Timeout of a single API request: nothing received for this long fails it (default 60s; 0 = none)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand drift; and __fish_seen_subcommand_from replace" -l kubernetes-version -d 'Kubernetes version X.Y (default: the API server\'s; offline: assumed and said so)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand drift; and __fish_seen_subcommand_from replace" -l region -d 'AWS region (default: the AWS environment/config, else the EKS cluster ARN)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand drift; and __fish_seen_subcommand_from replace" -l profile -d 'AWS shared-config profile' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand drift; and __fish_seen_subcommand_from replace" -l cluster-name -d 'EKS cluster name (default: derived from the kubeconfig; in a pod: required)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand drift; and __fish_seen_subcommand_from replace" -l instance-profile -d 'Instance profile of the nodes launched (default: the node class\'s `instanceProfile`, else the one holding its `role`, else `aws.defaultInstanceProfile`)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand drift; and __fish_seen_subcommand_from replace" -l cluster-endpoint -d 'API endpoint new nodes join (default: the kubeconfig\'s server; in a pod: required, the EKS cluster\'s endpoint)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand drift; and __fish_seen_subcommand_from replace" -s o -l output -d 'Output format' -r -f -a "table\t'Aligned columns'
wide\t'Columns with more detail'
json\t'The versioned JSON document'
yaml\t'The versioned YAML document'
name\t'One `kind/name` per line'"
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand drift; and __fish_seen_subcommand_from replace" -l color -d 'Colour output (NO_COLOR is honoured under auto)' -r -f -a "auto\t'Only on a terminal, and never with `NO_COLOR`'
always\t'Always'
never\t'Never'"
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand drift; and __fish_seen_subcommand_from replace" -l log-format -d 'Stderr as text, or as one JSON object per line for log collectors' -r -f -a "text\t'For people: `-v` lines as text'
json\t'For log collectors: one JSON object per line (timestamp, level, target, message, fields), the tool\'s own stderr lines included'"
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand drift; and __fish_seen_subcommand_from replace" -l validate -d 'Fields of -f manifests the API server does not know: strict refuses them (=true), warn reads on with a warning, ignore (=false) reads on silently' -r -f -a "strict\t'Refuse the input, naming the field (and the closest known one)'
warn\t'Warn on stderr and read on'
ignore\t'Read on silently'"
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand drift; and __fish_seen_subcommand_from replace" -l dry-run -d 'Print the plan and change nothing'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand drift; and __fish_seen_subcommand_from replace" -l watch -d 'Keep replacing as nodes drift, until Ctrl-C'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand drift; and __fish_seen_subcommand_from replace" -s y -l yes -d 'Replace without asking'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand drift; and __fish_seen_subcommand_from replace" -l via-controller -d 'Let the running Karpenter controller replace the nodes: delete their NodeClaims (Machines, Nodes) one budget\'s worth at a time, wait for each to be replaced'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand drift; and __fish_seen_subcommand_from replace" -l force -d 'Act although a Karpenter controller runs, and evict do-not-disrupt pods'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand drift; and __fish_seen_subcommand_from replace" -l no-headers -d 'Omit table headers'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand drift; and __fish_seen_subcommand_from replace" -s v -l verbose -d 'More logging on stderr (repeatable: -v info, -vv debug; KUBECTL_KARPENTER_LOG overrides)'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand drift; and __fish_seen_subcommand_from replace" -s q -l quiet -d 'Only errors on stderr'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand drift; and __fish_seen_subcommand_from replace" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand drift; and __fish_seen_subcommand_from replace" -s V -l version -d 'Print version'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand drift; and __fish_seen_subcommand_from help" -f -a "check" -d 'Evaluate every managed node and explain why it drifted (exit 1 when any did)'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand drift; and __fish_seen_subcommand_from help" -f -a "replace" -d 'Replace drifted (or named) nodes safely: replacement first, cordon, drain, terminate'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand drift; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand consolidate" -s f -l filename -d 'Manifest files or directories (`-` for stdin): offline mode' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand consolidate" -l nodepool -d 'Only nodes of these NodePools (or Provisioners) in the report' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand consolidate" -l catalog -d 'Replace the instance-type catalog (JSON or YAML)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand consolidate" -l now -d 'The instant evaluated, RFC 3339 (default: now)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand consolidate" -l feature-gates -d 'Feature gates, as the controller\'s FEATURE_GATES (`SpotToSpotConsolidation=true`, `CapacityBuffer=true`, `ReservedCapacity=false`). Live, the running controller\'s gates are the default' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand consolidate" -l min-values-policy -d 'What an unmet NodePool minValues does, as the controller\'s --min-values-policy / MIN_VALUES_POLICY: Strict (the pod waits) or BestEffort (minValues relaxed, the NodeClaim annotated). Live, the running controller\'s setting is the default' -r -f -a "Strict\t''
BestEffort\t''"
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand consolidate" -l preference-policy -d 'Whether pods\' preferences (preferred node and pod affinity and anti-affinity, ScheduleAnyway topology spreads) count, as the controller\'s --preference-policy / PREFERENCE_POLICY: Respect (required until relaxed) or Ignore. Live, the running controller\'s setting is the default' -r -f -a "Respect\t''
Ignore\t''"
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand consolidate" -l vm-memory-overhead-percent -d 'The AWS controller\'s VM_MEMORY_OVERHEAD_PERCENT (default 0.075): the memory share each instance type\'s capacity loses. Live, the running controller\'s is the default' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand consolidate" -l reserved-enis -d 'The AWS controller\'s RESERVED_ENIS (default 0): ENIs that give no pods. Live, the running controller\'s is the default' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand consolidate" -l timeout -d 'How long a node\'s drain may take (also how long a PDB at zero is waited for)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand consolidate" -l ready-timeout -d 'How long a replacement may take to be Ready before the node is rolled back' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand consolidate" -l wait-for-lease -d 'Wait this long for another run\'s operator lease instead of refusing (default 10m; `forever`: a standby replica in a pod)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand consolidate" -l lease-namespace -d 'Namespace of the operator lease (a coordination.k8s.io Lease named kubectl-karpenter)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand consolidate" -l health-addr -d 'With --watch: serve /healthz (the loop runs) and /readyz (holding the operator lease, the cluster read) on this address, e.g. :8081' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand consolidate" -l kubeconfig -d 'Path to the kubeconfig file' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand consolidate" -l context -d 'The kubeconfig context to use' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand consolidate" -l cluster -d 'The kubeconfig cluster to use' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand consolidate" -l user -d 'The kubeconfig user to use' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand consolidate" -s n -l namespace -d 'Namespace, where it applies' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand consolidate" -l request-timeout -d 'Timeout of a single API request: nothing received for this long fails it (default 60s; 0 = none)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand consolidate" -l kubernetes-version -d 'Kubernetes version X.Y (default: the API server\'s; offline: assumed and said so)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand consolidate" -l region -d 'AWS region (default: the AWS environment/config, else the EKS cluster ARN)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand consolidate" -l profile -d 'AWS shared-config profile' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand consolidate" -l cluster-name -d 'EKS cluster name (default: derived from the kubeconfig; in a pod: required)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand consolidate" -l instance-profile -d 'Instance profile of the nodes launched (default: the node class\'s `instanceProfile`, else the one holding its `role`, else `aws.defaultInstanceProfile`)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand consolidate" -l cluster-endpoint -d 'API endpoint new nodes join (default: the kubeconfig\'s server; in a pod: required, the EKS cluster\'s endpoint)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand consolidate" -s o -l output -d 'Output format' -r -f -a "table\t'Aligned columns'
wide\t'Columns with more detail'
json\t'The versioned JSON document'
yaml\t'The versioned YAML document'
name\t'One `kind/name` per line'"
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand consolidate" -l color -d 'Colour output (NO_COLOR is honoured under auto)' -r -f -a "auto\t'Only on a terminal, and never with `NO_COLOR`'
always\t'Always'
never\t'Never'"
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand consolidate" -l log-format -d 'Stderr as text, or as one JSON object per line for log collectors' -r -f -a "text\t'For people: `-v` lines as text'
json\t'For log collectors: one JSON object per line (timestamp, level, target, message, fields), the tool\'s own stderr lines included'"
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand consolidate" -l validate -d 'Fields of -f manifests the API server does not know: strict refuses them (=true), warn reads on with a warning, ignore (=false) reads on silently' -r -f -a "strict\t'Refuse the input, naming the field (and the closest known one)'
warn\t'Warn on stderr and read on'
ignore\t'Read on silently'"
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand consolidate" -l dry-run -d 'Show what --yes would do now (the first action, node by node) and change nothing (live)'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand consolidate" -s y -l yes -d 'Carry the decisions out without asking (live): deletes and replacements through the replace pipeline, deciding again after each action'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand consolidate" -l watch -d 'Keep consolidating as the cluster changes, until Ctrl-C (asks once on a terminal)'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand consolidate" -l force -d 'Act although a Karpenter controller runs (consolidation is its job there)'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand consolidate" -l no-headers -d 'Omit table headers'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand consolidate" -s v -l verbose -d 'More logging on stderr (repeatable: -v info, -vv debug; KUBECTL_KARPENTER_LOG overrides)'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand consolidate" -s q -l quiet -d 'Only errors on stderr'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand consolidate" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand consolidate" -s V -l version -d 'Print version'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand enable-drift" -l karpenter-namespace -d 'Namespace of the Karpenter controller Deployment (default: found in any namespace; `-n` works too)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand enable-drift" -l timeout -d 'How long to wait for the controller\'s rollout (e.g. 10m)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand enable-drift" -l kubeconfig -d 'Path to the kubeconfig file' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand enable-drift" -l context -d 'The kubeconfig context to use' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand enable-drift" -l cluster -d 'The kubeconfig cluster to use' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand enable-drift" -l user -d 'The kubeconfig user to use' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand enable-drift" -s n -l namespace -d 'Namespace, where it applies' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand enable-drift" -l request-timeout -d 'Timeout of a single API request: nothing received for this long fails it (default 60s; 0 = none)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand enable-drift" -l kubernetes-version -d 'Kubernetes version X.Y (default: the API server\'s; offline: assumed and said so)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand enable-drift" -l region -d 'AWS region (default: the AWS environment/config, else the EKS cluster ARN)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand enable-drift" -l profile -d 'AWS shared-config profile' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand enable-drift" -l cluster-name -d 'EKS cluster name (default: derived from the kubeconfig; in a pod: required)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand enable-drift" -l instance-profile -d 'Instance profile of the nodes launched (default: the node class\'s `instanceProfile`, else the one holding its `role`, else `aws.defaultInstanceProfile`)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand enable-drift" -l cluster-endpoint -d 'API endpoint new nodes join (default: the kubeconfig\'s server; in a pod: required, the EKS cluster\'s endpoint)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand enable-drift" -s o -l output -d 'Output format' -r -f -a "table\t'Aligned columns'
wide\t'Columns with more detail'
json\t'The versioned JSON document'
yaml\t'The versioned YAML document'
name\t'One `kind/name` per line'"
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand enable-drift" -l color -d 'Colour output (NO_COLOR is honoured under auto)' -r -f -a "auto\t'Only on a terminal, and never with `NO_COLOR`'
always\t'Always'
never\t'Never'"
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand enable-drift" -l log-format -d 'Stderr as text, or as one JSON object per line for log collectors' -r -f -a "text\t'For people: `-v` lines as text'
json\t'For log collectors: one JSON object per line (timestamp, level, target, message, fields), the tool\'s own stderr lines included'"
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand enable-drift" -l validate -d 'Fields of -f manifests the API server does not know: strict refuses them (=true), warn reads on with a warning, ignore (=false) reads on silently' -r -f -a "strict\t'Refuse the input, naming the field (and the closest known one)'
warn\t'Warn on stderr and read on'
ignore\t'Read on silently'"
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand enable-drift" -l no-restart -d 'v0.21–v0.31: only edit the ConfigMap, do not restart the controller (it reads its settings at startup, so the change waits for its next restart)'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand enable-drift" -l dry-run -d 'Print what would change and change nothing'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand enable-drift" -s y -l yes -d 'Change without asking'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand enable-drift" -l no-headers -d 'Omit table headers'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand enable-drift" -s v -l verbose -d 'More logging on stderr (repeatable: -v info, -vv debug; KUBECTL_KARPENTER_LOG overrides)'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand enable-drift" -s q -l quiet -d 'Only errors on stderr'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand enable-drift" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand enable-drift" -s V -l version -d 'Print version'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand disable-drift" -l karpenter-namespace -d 'Namespace of the Karpenter controller Deployment (default: found in any namespace; `-n` works too)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand disable-drift" -l timeout -d 'How long to wait for the controller\'s rollout (e.g. 10m)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand disable-drift" -l kubeconfig -d 'Path to the kubeconfig file' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand disable-drift" -l context -d 'The kubeconfig context to use' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand disable-drift" -l cluster -d 'The kubeconfig cluster to use' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand disable-drift" -l user -d 'The kubeconfig user to use' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand disable-drift" -s n -l namespace -d 'Namespace, where it applies' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand disable-drift" -l request-timeout -d 'Timeout of a single API request: nothing received for this long fails it (default 60s; 0 = none)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand disable-drift" -l kubernetes-version -d 'Kubernetes version X.Y (default: the API server\'s; offline: assumed and said so)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand disable-drift" -l region -d 'AWS region (default: the AWS environment/config, else the EKS cluster ARN)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand disable-drift" -l profile -d 'AWS shared-config profile' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand disable-drift" -l cluster-name -d 'EKS cluster name (default: derived from the kubeconfig; in a pod: required)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand disable-drift" -l instance-profile -d 'Instance profile of the nodes launched (default: the node class\'s `instanceProfile`, else the one holding its `role`, else `aws.defaultInstanceProfile`)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand disable-drift" -l cluster-endpoint -d 'API endpoint new nodes join (default: the kubeconfig\'s server; in a pod: required, the EKS cluster\'s endpoint)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand disable-drift" -s o -l output -d 'Output format' -r -f -a "table\t'Aligned columns'
wide\t'Columns with more detail'
json\t'The versioned JSON document'
yaml\t'The versioned YAML document'
name\t'One `kind/name` per line'"
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand disable-drift" -l color -d 'Colour output (NO_COLOR is honoured under auto)' -r -f -a "auto\t'Only on a terminal, and never with `NO_COLOR`'
always\t'Always'
never\t'Never'"
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand disable-drift" -l log-format -d 'Stderr as text, or as one JSON object per line for log collectors' -r -f -a "text\t'For people: `-v` lines as text'
json\t'For log collectors: one JSON object per line (timestamp, level, target, message, fields), the tool\'s own stderr lines included'"
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand disable-drift" -l validate -d 'Fields of -f manifests the API server does not know: strict refuses them (=true), warn reads on with a warning, ignore (=false) reads on silently' -r -f -a "strict\t'Refuse the input, naming the field (and the closest known one)'
warn\t'Warn on stderr and read on'
ignore\t'Read on silently'"
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand disable-drift" -l no-restart -d 'v0.21–v0.31: only edit the ConfigMap, do not restart the controller (it reads its settings at startup, so the change waits for its next restart)'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand disable-drift" -l dry-run -d 'Print what would change and change nothing'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand disable-drift" -s y -l yes -d 'Change without asking'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand disable-drift" -l no-headers -d 'Omit table headers'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand disable-drift" -s v -l verbose -d 'More logging on stderr (repeatable: -v info, -vv debug; KUBECTL_KARPENTER_LOG overrides)'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand disable-drift" -s q -l quiet -d 'Only errors on stderr'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand disable-drift" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand disable-drift" -s V -l version -d 'Print version'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand version" -l kubeconfig -d 'Path to the kubeconfig file' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand version" -l context -d 'The kubeconfig context to use' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand version" -l cluster -d 'The kubeconfig cluster to use' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand version" -l user -d 'The kubeconfig user to use' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand version" -s n -l namespace -d 'Namespace, where it applies' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand version" -l request-timeout -d 'Timeout of a single API request: nothing received for this long fails it (default 60s; 0 = none)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand version" -l kubernetes-version -d 'Kubernetes version X.Y (default: the API server\'s; offline: assumed and said so)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand version" -l region -d 'AWS region (default: the AWS environment/config, else the EKS cluster ARN)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand version" -l profile -d 'AWS shared-config profile' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand version" -l cluster-name -d 'EKS cluster name (default: derived from the kubeconfig; in a pod: required)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand version" -l instance-profile -d 'Instance profile of the nodes launched (default: the node class\'s `instanceProfile`, else the one holding its `role`, else `aws.defaultInstanceProfile`)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand version" -l cluster-endpoint -d 'API endpoint new nodes join (default: the kubeconfig\'s server; in a pod: required, the EKS cluster\'s endpoint)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand version" -s o -l output -d 'Output format' -r -f -a "table\t'Aligned columns'
wide\t'Columns with more detail'
json\t'The versioned JSON document'
yaml\t'The versioned YAML document'
name\t'One `kind/name` per line'"
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand version" -l color -d 'Colour output (NO_COLOR is honoured under auto)' -r -f -a "auto\t'Only on a terminal, and never with `NO_COLOR`'
always\t'Always'
never\t'Never'"
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand version" -l log-format -d 'Stderr as text, or as one JSON object per line for log collectors' -r -f -a "text\t'For people: `-v` lines as text'
json\t'For log collectors: one JSON object per line (timestamp, level, target, message, fields), the tool\'s own stderr lines included'"
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand version" -l validate -d 'Fields of -f manifests the API server does not know: strict refuses them (=true), warn reads on with a warning, ignore (=false) reads on silently' -r -f -a "strict\t'Refuse the input, naming the field (and the closest known one)'
warn\t'Warn on stderr and read on'
ignore\t'Read on silently'"
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand version" -l no-headers -d 'Omit table headers'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand version" -s v -l verbose -d 'More logging on stderr (repeatable: -v info, -vv debug; KUBECTL_KARPENTER_LOG overrides)'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand version" -s q -l quiet -d 'Only errors on stderr'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand version" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand version" -s V -l version -d 'Print version'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand completion" -l kubeconfig -d 'Path to the kubeconfig file' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand completion" -l context -d 'The kubeconfig context to use' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand completion" -l cluster -d 'The kubeconfig cluster to use' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand completion" -l user -d 'The kubeconfig user to use' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand completion" -s n -l namespace -d 'Namespace, where it applies' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand completion" -l request-timeout -d 'Timeout of a single API request: nothing received for this long fails it (default 60s; 0 = none)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand completion" -l kubernetes-version -d 'Kubernetes version X.Y (default: the API server\'s; offline: assumed and said so)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand completion" -l region -d 'AWS region (default: the AWS environment/config, else the EKS cluster ARN)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand completion" -l profile -d 'AWS shared-config profile' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand completion" -l cluster-name -d 'EKS cluster name (default: derived from the kubeconfig; in a pod: required)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand completion" -l instance-profile -d 'Instance profile of the nodes launched (default: the node class\'s `instanceProfile`, else the one holding its `role`, else `aws.defaultInstanceProfile`)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand completion" -l cluster-endpoint -d 'API endpoint new nodes join (default: the kubeconfig\'s server; in a pod: required, the EKS cluster\'s endpoint)' -r
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand completion" -s o -l output -d 'Output format' -r -f -a "table\t'Aligned columns'
wide\t'Columns with more detail'
json\t'The versioned JSON document'
yaml\t'The versioned YAML document'
name\t'One `kind/name` per line'"
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand completion" -l color -d 'Colour output (NO_COLOR is honoured under auto)' -r -f -a "auto\t'Only on a terminal, and never with `NO_COLOR`'
always\t'Always'
never\t'Never'"
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand completion" -l log-format -d 'Stderr as text, or as one JSON object per line for log collectors' -r -f -a "text\t'For people: `-v` lines as text'
json\t'For log collectors: one JSON object per line (timestamp, level, target, message, fields), the tool\'s own stderr lines included'"
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand completion" -l validate -d 'Fields of -f manifests the API server does not know: strict refuses them (=true), warn reads on with a warning, ignore (=false) reads on silently' -r -f -a "strict\t'Refuse the input, naming the field (and the closest known one)'
warn\t'Warn on stderr and read on'
ignore\t'Read on silently'"
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand completion" -l no-headers -d 'Omit table headers'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand completion" -s v -l verbose -d 'More logging on stderr (repeatable: -v info, -vv debug; KUBECTL_KARPENTER_LOG overrides)'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand completion" -s q -l quiet -d 'Only errors on stderr'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand completion" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand completion" -s V -l version -d 'Print version'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand help; and not __fish_seen_subcommand_from provision ami convert nodes drift consolidate enable-drift disable-drift version completion help" -f -a "provision" -d 'Plan the capacity Karpenter would launch for pending pods'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand help; and not __fish_seen_subcommand_from provision ami convert nodes drift consolidate enable-drift disable-drift version completion help" -f -a "ami" -d 'Show the AMIs each node class resolves to, and from which SSM parameter or filter'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand help; and not __fish_seen_subcommand_from provision ami convert nodes drift consolidate enable-drift disable-drift version completion help" -f -a "convert" -d 'Convert v1alpha5 and v1beta1 Karpenter manifests to v1'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand help; and not __fish_seen_subcommand_from provision ami convert nodes drift consolidate enable-drift disable-drift version completion help" -f -a "nodes" -d 'Show managed nodes: pool, type, zone, capacity type, AMI, age, drift, requests vs allocatable, $/hour, the consolidation decision, and totals per pool'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand help; and not __fish_seen_subcommand_from provision ami convert nodes drift consolidate enable-drift disable-drift version completion help" -f -a "drift" -d 'Detect drifted nodes and explain why (drift check)'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand help; and not __fish_seen_subcommand_from provision ami convert nodes drift consolidate enable-drift disable-drift version completion help" -f -a "consolidate" -d 'What Karpenter\'s disruption controller would do to each node (expiration, drift, emptiness, consolidation), and why not for the others; --yes carries out expiration and consolidation'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand help; and not __fish_seen_subcommand_from provision ami convert nodes drift consolidate enable-drift disable-drift version completion help" -f -a "enable-drift" -d 'Turn Karpenter\'s drift feature on in the running controller (v0.21–v0.37)'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand help; and not __fish_seen_subcommand_from provision ami convert nodes drift consolidate enable-drift disable-drift version completion help" -f -a "disable-drift" -d 'Turn Karpenter\'s drift feature off in the running controller (v0.21–v0.37)'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand help; and not __fish_seen_subcommand_from provision ami convert nodes drift consolidate enable-drift disable-drift version completion help" -f -a "version" -d 'Print the version'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand help; and not __fish_seen_subcommand_from provision ami convert nodes drift consolidate enable-drift disable-drift version completion help" -f -a "completion" -d 'Print a shell completion script (bash, zsh, fish, powershell)'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand help; and not __fish_seen_subcommand_from provision ami convert nodes drift consolidate enable-drift disable-drift version completion help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand help; and __fish_seen_subcommand_from drift" -f -a "check" -d 'Evaluate every managed node and explain why it drifted (exit 1 when any did)'
complete -c kubectl-karpenter -n "__fish_kubectl_karpenter_using_subcommand help; and __fish_seen_subcommand_from drift" -f -a "replace" -d 'Replace drifted (or named) nodes safely: replacement first, cordon, drain, terminate'
