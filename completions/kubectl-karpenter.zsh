#compdef kubectl-karpenter

autoload -U is-at-least

_kubectl-karpenter() {
    typeset -A opt_args
    typeset -a _arguments_options
    local ret=1

    if is-at-least 5.2; then
        _arguments_options=(-s -S -C)
    else
        _arguments_options=(-s -C)
    fi

    local context curcontext="$curcontext" state line
    _arguments "${_arguments_options[@]}" : \
'--kubeconfig=[Path to the kubeconfig file]:PATH:_default' \
'--context=[The kubeconfig context to use]:CONTEXT:_default' \
'--cluster=[The kubeconfig cluster to use]:CLUSTER:_default' \
'--user=[The kubeconfig user to use]:USER:_default' \
'-n+[Namespace, where it applies]:NAMESPACE:_default' \
'--namespace=[Namespace, where it applies]:NAMESPACE:_default' \
'--request-timeout=[Timeout of a single API request\: nothing received for this long fails it (default 60s; 0 = none)]:DURATION:_default' \
'--kubernetes-version=[Kubernetes version X.Y (default\: the API server'\''s; offline\: assumed and said so)]:X.Y:_default' \
'--region=[AWS region (default\: the AWS environment/config, else the EKS cluster ARN)]:REGION:_default' \
'--profile=[AWS shared-config profile]:PROFILE:_default' \
'--cluster-name=[EKS cluster name (default\: derived from the kubeconfig; in a pod\: required)]:CLUSTER_NAME:_default' \
'--instance-profile=[Instance profile of the nodes launched (default\: the node class'\''s \`instanceProfile\`, else the one holding its \`role\`, else \`aws.defaultInstanceProfile\`)]:NAME:_default' \
'--cluster-endpoint=[API endpoint new nodes join (default\: the kubeconfig'\''s server; in a pod\: required, the EKS cluster'\''s endpoint)]:URL:_default' \
'-o+[Output format]:OUTPUT:((table\:"Aligned columns"
wide\:"Columns with more detail"
json\:"The versioned JSON document"
yaml\:"The versioned YAML document"
name\:"One \`kind/name\` per line"))' \
'--output=[Output format]:OUTPUT:((table\:"Aligned columns"
wide\:"Columns with more detail"
json\:"The versioned JSON document"
yaml\:"The versioned YAML document"
name\:"One \`kind/name\` per line"))' \
'--color=[Colour output (NO_COLOR is honoured under auto)]:COLOR:((auto\:"Only on a terminal, and never with \`NO_COLOR\`"
always\:"Always"
never\:"Never"))' \
'--log-format=[Stderr as text, or as one JSON object per line for log collectors]:FORMAT:((text\:"For people\: \`-v\` lines as text"
json\:"For log collectors\: one JSON object per line (timestamp, level, target, message, fields), the tool'\''s own stderr lines included"))' \
'--validate=[Fields of -f manifests the API server does not know\: strict refuses them (=true), warn reads on with a warning, ignore (=false) reads on silently]::MODE:((strict\:"Refuse the input, naming the field (and the closest known one)"
warn\:"Warn on stderr and read on"
ignore\:"Read on silently"))' \
'--no-headers[Omit table headers]' \
'*-v[More logging on stderr (repeatable\: -v info, -vv debug; KUBECTL_KARPENTER_LOG overrides)]' \
'*--verbose[More logging on stderr (repeatable\: -v info, -vv debug; KUBECTL_KARPENTER_LOG overrides)]' \
'-q[Only errors on stderr]' \
'--quiet[Only errors on stderr]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
'-V[Print version]' \
'--version[Print version]' \
":: :_kubectl-karpenter_commands" \
"*::: :->kubectl-karpenter" \
&& ret=0
    case $state in
    (kubectl-karpenter)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:kubectl-karpenter-command-$line[1]:"
        case $line[1] in
            (provision)
_arguments "${_arguments_options[@]}" : \
'*-f+[Manifest files or directories (\`-\` for stdin)\: offline mode]:PATH:_default' \
'*--filename=[Manifest files or directories (\`-\` for stdin)\: offline mode]:PATH:_default' \
'*--nodepool=[Only consider these NodePools (or Provisioners)]:NAME:_default' \
'--catalog=[Replace the instance-type catalog (JSON or YAML, see the README)]:FILE:_default' \
'--max-instance-types=[Keep at most this many instance types per NodeClaim (Karpenter\: 600)]:N:_default' \
'--min-values-policy=[What an unmet NodePool minValues does, as the controller'\''s --min-values-policy / MIN_VALUES_POLICY\: Strict (the pod waits) or BestEffort (minValues relaxed, the NodeClaim annotated). Live, the running controller'\''s setting is the default]:POLICY:(Strict BestEffort)' \
'--preference-policy=[Whether pods'\'' preferences (preferred node and pod affinity and anti-affinity, ScheduleAnyway topology spreads) count, as the controller'\''s --preference-policy / PREFERENCE_POLICY\: Respect (required until relaxed) or Ignore. Live, the running controller'\''s setting is the default]:POLICY:(Respect Ignore)' \
'--feature-gates=[Feature gates, as the controller'\''s FEATURE_GATES (\`CapacityBuffer=true\` plans the CapacityBuffers'\'' capacity, \`ReservedCapacity=false\` plans and launches without capacity reservations). Live, the running controller'\''s gates are the default]:GATES:_default' \
'--vm-memory-overhead-percent=[The AWS controller'\''s VM_MEMORY_OVERHEAD_PERCENT (default 0.075)\: the memory share each instance type'\''s capacity loses. Live, the running controller'\''s is the default]:FRACTION:_default' \
'--reserved-enis=[The AWS controller'\''s RESERVED_ENIS (default 0)\: ENIs that give no pods. Live, the running controller'\''s is the default]:N:_default' \
'--timeout=[How long --wait waits (e.g. 10m)]:DURATION:_default' \
'--wait-for-lease=[Wait this long for another run'\''s operator lease instead of refusing (default 10m; \`forever\`\: a standby replica in a pod)]::DURATION:_default' \
'--lease-namespace=[Namespace of the operator lease (a coordination.k8s.io Lease named kubectl-karpenter)]:NAMESPACE:_default' \
'--health-addr=[With --watch\: serve /healthz (the loop runs) and /readyz (holding the operator lease, the cluster read) on this address, e.g. \:8081]:ADDR:_default' \
'--kubeconfig=[Path to the kubeconfig file]:PATH:_default' \
'--context=[The kubeconfig context to use]:CONTEXT:_default' \
'--cluster=[The kubeconfig cluster to use]:CLUSTER:_default' \
'--user=[The kubeconfig user to use]:USER:_default' \
'-n+[Namespace, where it applies]:NAMESPACE:_default' \
'--namespace=[Namespace, where it applies]:NAMESPACE:_default' \
'--request-timeout=[Timeout of a single API request\: nothing received for this long fails it (default 60s; 0 = none)]:DURATION:_default' \
'--kubernetes-version=[Kubernetes version X.Y (default\: the API server'\''s; offline\: assumed and said so)]:X.Y:_default' \
'--region=[AWS region (default\: the AWS environment/config, else the EKS cluster ARN)]:REGION:_default' \
'--profile=[AWS shared-config profile]:PROFILE:_default' \
'--cluster-name=[EKS cluster name (default\: derived from the kubeconfig; in a pod\: required)]:CLUSTER_NAME:_default' \
'--instance-profile=[Instance profile of the nodes launched (default\: the node class'\''s \`instanceProfile\`, else the one holding its \`role\`, else \`aws.defaultInstanceProfile\`)]:NAME:_default' \
'--cluster-endpoint=[API endpoint new nodes join (default\: the kubeconfig'\''s server; in a pod\: required, the EKS cluster'\''s endpoint)]:URL:_default' \
'-o+[Output format]:OUTPUT:((table\:"Aligned columns"
wide\:"Columns with more detail"
json\:"The versioned JSON document"
yaml\:"The versioned YAML document"
name\:"One \`kind/name\` per line"))' \
'--output=[Output format]:OUTPUT:((table\:"Aligned columns"
wide\:"Columns with more detail"
json\:"The versioned JSON document"
yaml\:"The versioned YAML document"
name\:"One \`kind/name\` per line"))' \
'--color=[Colour output (NO_COLOR is honoured under auto)]:COLOR:((auto\:"Only on a terminal, and never with \`NO_COLOR\`"
always\:"Always"
never\:"Never"))' \
'--log-format=[Stderr as text, or as one JSON object per line for log collectors]:FORMAT:((text\:"For people\: \`-v\` lines as text"
json\:"For log collectors\: one JSON object per line (timestamp, level, target, message, fields), the tool'\''s own stderr lines included"))' \
'--validate=[Fields of -f manifests the API server does not know\: strict refuses them (=true), warn reads on with a warning, ignore (=false) reads on silently]::MODE:((strict\:"Refuse the input, naming the field (and the closest known one)"
warn\:"Warn on stderr and read on"
ignore\:"Read on silently"))' \
'--dry-run[Print the plan and change nothing]' \
'-y[Launch without asking (live mode)]' \
'--yes[Launch without asking (live mode)]' \
'--wait[After launching, wait until the nodes are Ready and the pods bound]' \
'(--dry-run)--watch[Keep running\: batch pending pods like Karpenter, launch, and remove empty nodes]' \
'--force[Act even though an in-cluster Karpenter controller is running]' \
'--no-headers[Omit table headers]' \
'*-v[More logging on stderr (repeatable\: -v info, -vv debug; KUBECTL_KARPENTER_LOG overrides)]' \
'*--verbose[More logging on stderr (repeatable\: -v info, -vv debug; KUBECTL_KARPENTER_LOG overrides)]' \
'-q[Only errors on stderr]' \
'--quiet[Only errors on stderr]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
'-V[Print version]' \
'--version[Print version]' \
&& ret=0
;;
(ami)
_arguments "${_arguments_options[@]}" : \
'*-f+[Manifest files or directories (\`-\` for stdin) holding the node classes]:PATH:_default' \
'*--filename=[Manifest files or directories (\`-\` for stdin) holding the node classes]:PATH:_default' \
'--kubeconfig=[Path to the kubeconfig file]:PATH:_default' \
'--context=[The kubeconfig context to use]:CONTEXT:_default' \
'--cluster=[The kubeconfig cluster to use]:CLUSTER:_default' \
'--user=[The kubeconfig user to use]:USER:_default' \
'-n+[Namespace, where it applies]:NAMESPACE:_default' \
'--namespace=[Namespace, where it applies]:NAMESPACE:_default' \
'--request-timeout=[Timeout of a single API request\: nothing received for this long fails it (default 60s; 0 = none)]:DURATION:_default' \
'--kubernetes-version=[Kubernetes version X.Y (default\: the API server'\''s; offline\: assumed and said so)]:X.Y:_default' \
'--region=[AWS region (default\: the AWS environment/config, else the EKS cluster ARN)]:REGION:_default' \
'--profile=[AWS shared-config profile]:PROFILE:_default' \
'--cluster-name=[EKS cluster name (default\: derived from the kubeconfig; in a pod\: required)]:CLUSTER_NAME:_default' \
'--instance-profile=[Instance profile of the nodes launched (default\: the node class'\''s \`instanceProfile\`, else the one holding its \`role\`, else \`aws.defaultInstanceProfile\`)]:NAME:_default' \
'--cluster-endpoint=[API endpoint new nodes join (default\: the kubeconfig'\''s server; in a pod\: required, the EKS cluster'\''s endpoint)]:URL:_default' \
'-o+[Output format]:OUTPUT:((table\:"Aligned columns"
wide\:"Columns with more detail"
json\:"The versioned JSON document"
yaml\:"The versioned YAML document"
name\:"One \`kind/name\` per line"))' \
'--output=[Output format]:OUTPUT:((table\:"Aligned columns"
wide\:"Columns with more detail"
json\:"The versioned JSON document"
yaml\:"The versioned YAML document"
name\:"One \`kind/name\` per line"))' \
'--color=[Colour output (NO_COLOR is honoured under auto)]:COLOR:((auto\:"Only on a terminal, and never with \`NO_COLOR\`"
always\:"Always"
never\:"Never"))' \
'--log-format=[Stderr as text, or as one JSON object per line for log collectors]:FORMAT:((text\:"For people\: \`-v\` lines as text"
json\:"For log collectors\: one JSON object per line (timestamp, level, target, message, fields), the tool'\''s own stderr lines included"))' \
'--validate=[Fields of -f manifests the API server does not know\: strict refuses them (=true), warn reads on with a warning, ignore (=false) reads on silently]::MODE:((strict\:"Refuse the input, naming the field (and the closest known one)"
warn\:"Warn on stderr and read on"
ignore\:"Read on silently"))' \
'--no-headers[Omit table headers]' \
'*-v[More logging on stderr (repeatable\: -v info, -vv debug; KUBECTL_KARPENTER_LOG overrides)]' \
'*--verbose[More logging on stderr (repeatable\: -v info, -vv debug; KUBECTL_KARPENTER_LOG overrides)]' \
'-q[Only errors on stderr]' \
'--quiet[Only errors on stderr]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
'-V[Print version]' \
'--version[Print version]' \
'*::nodeclasses -- Node classes to show (EC2NodeClass, AWSNodeTemplate; default\: every one in the input):_default' \
&& ret=0
;;
(convert)
_arguments "${_arguments_options[@]}" : \
'*-f+[Manifest files or directories (\`-\` for stdin)]:PATH:_default' \
'*--filename=[Manifest files or directories (\`-\` for stdin)]:PATH:_default' \
'--to=[Target API version]:TO:(v1)' \
'--kubeconfig=[Path to the kubeconfig file]:PATH:_default' \
'--context=[The kubeconfig context to use]:CONTEXT:_default' \
'--cluster=[The kubeconfig cluster to use]:CLUSTER:_default' \
'--user=[The kubeconfig user to use]:USER:_default' \
'-n+[Namespace, where it applies]:NAMESPACE:_default' \
'--namespace=[Namespace, where it applies]:NAMESPACE:_default' \
'--request-timeout=[Timeout of a single API request\: nothing received for this long fails it (default 60s; 0 = none)]:DURATION:_default' \
'--kubernetes-version=[Kubernetes version X.Y (default\: the API server'\''s; offline\: assumed and said so)]:X.Y:_default' \
'--region=[AWS region (default\: the AWS environment/config, else the EKS cluster ARN)]:REGION:_default' \
'--profile=[AWS shared-config profile]:PROFILE:_default' \
'--cluster-name=[EKS cluster name (default\: derived from the kubeconfig; in a pod\: required)]:CLUSTER_NAME:_default' \
'--instance-profile=[Instance profile of the nodes launched (default\: the node class'\''s \`instanceProfile\`, else the one holding its \`role\`, else \`aws.defaultInstanceProfile\`)]:NAME:_default' \
'--cluster-endpoint=[API endpoint new nodes join (default\: the kubeconfig'\''s server; in a pod\: required, the EKS cluster'\''s endpoint)]:URL:_default' \
'-o+[Output format]:OUTPUT:((table\:"Aligned columns"
wide\:"Columns with more detail"
json\:"The versioned JSON document"
yaml\:"The versioned YAML document"
name\:"One \`kind/name\` per line"))' \
'--output=[Output format]:OUTPUT:((table\:"Aligned columns"
wide\:"Columns with more detail"
json\:"The versioned JSON document"
yaml\:"The versioned YAML document"
name\:"One \`kind/name\` per line"))' \
'--color=[Colour output (NO_COLOR is honoured under auto)]:COLOR:((auto\:"Only on a terminal, and never with \`NO_COLOR\`"
always\:"Always"
never\:"Never"))' \
'--log-format=[Stderr as text, or as one JSON object per line for log collectors]:FORMAT:((text\:"For people\: \`-v\` lines as text"
json\:"For log collectors\: one JSON object per line (timestamp, level, target, message, fields), the tool'\''s own stderr lines included"))' \
'--validate=[Fields of -f manifests the API server does not know\: strict refuses them (=true), warn reads on with a warning, ignore (=false) reads on silently]::MODE:((strict\:"Refuse the input, naming the field (and the closest known one)"
warn\:"Warn on stderr and read on"
ignore\:"Read on silently"))' \
'--no-headers[Omit table headers]' \
'*-v[More logging on stderr (repeatable\: -v info, -vv debug; KUBECTL_KARPENTER_LOG overrides)]' \
'*--verbose[More logging on stderr (repeatable\: -v info, -vv debug; KUBECTL_KARPENTER_LOG overrides)]' \
'-q[Only errors on stderr]' \
'--quiet[Only errors on stderr]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
'-V[Print version]' \
'--version[Print version]' \
&& ret=0
;;
(nodes)
_arguments "${_arguments_options[@]}" : \
'*-f+[Manifest files or directories (\`-\` for stdin)\: offline mode (AWS is not asked)]:PATH:_default' \
'*--filename=[Manifest files or directories (\`-\` for stdin)\: offline mode (AWS is not asked)]:PATH:_default' \
'--now=[The instant evaluated (ages, the consolidation decision), RFC 3339 (default\: now)]:RFC3339:_default' \
'*--nodepool=[Only nodes of these NodePools (or Provisioners)]:NAME:_default' \
'-l+[Only nodes matching this label selector (\`k=v,k!=v,k in (a,b),k notin (a),k,!k\`)]:SELECTOR:_default' \
'--selector=[Only nodes matching this label selector (\`k=v,k!=v,k in (a,b),k notin (a),k,!k\`)]:SELECTOR:_default' \
'--catalog=[Replace the instance-type catalog used for prices (JSON or YAML, see the README)]:FILE:_default' \
'--feature-gates=[Feature gates the CONSOLIDATION column decides with, as the controller'\''s FEATURE_GATES (\`SpotToSpotConsolidation=true\`, \`CapacityBuffer=true\`, \`ReservedCapacity=false\`). Live, the running controller'\''s gates are the default]:GATES:_default' \
'--min-values-policy=[What an unmet NodePool minValues does, as the controller'\''s --min-values-policy / MIN_VALUES_POLICY\: Strict (the pod waits) or BestEffort (minValues relaxed, the NodeClaim annotated). Live, the running controller'\''s setting is the default]:POLICY:(Strict BestEffort)' \
'--preference-policy=[Whether pods'\'' preferences (preferred node and pod affinity and anti-affinity, ScheduleAnyway topology spreads) count, as the controller'\''s --preference-policy / PREFERENCE_POLICY\: Respect (required until relaxed) or Ignore. Live, the running controller'\''s setting is the default]:POLICY:(Respect Ignore)' \
'--vm-memory-overhead-percent=[The AWS controller'\''s VM_MEMORY_OVERHEAD_PERCENT (default 0.075)\: the memory share each instance type'\''s capacity loses. Live, the running controller'\''s is the default]:FRACTION:_default' \
'--reserved-enis=[The AWS controller'\''s RESERVED_ENIS (default 0)\: ENIs that give no pods. Live, the running controller'\''s is the default]:N:_default' \
'--kubeconfig=[Path to the kubeconfig file]:PATH:_default' \
'--context=[The kubeconfig context to use]:CONTEXT:_default' \
'--cluster=[The kubeconfig cluster to use]:CLUSTER:_default' \
'--user=[The kubeconfig user to use]:USER:_default' \
'-n+[Namespace, where it applies]:NAMESPACE:_default' \
'--namespace=[Namespace, where it applies]:NAMESPACE:_default' \
'--request-timeout=[Timeout of a single API request\: nothing received for this long fails it (default 60s; 0 = none)]:DURATION:_default' \
'--kubernetes-version=[Kubernetes version X.Y (default\: the API server'\''s; offline\: assumed and said so)]:X.Y:_default' \
'--region=[AWS region (default\: the AWS environment/config, else the EKS cluster ARN)]:REGION:_default' \
'--profile=[AWS shared-config profile]:PROFILE:_default' \
'--cluster-name=[EKS cluster name (default\: derived from the kubeconfig; in a pod\: required)]:CLUSTER_NAME:_default' \
'--instance-profile=[Instance profile of the nodes launched (default\: the node class'\''s \`instanceProfile\`, else the one holding its \`role\`, else \`aws.defaultInstanceProfile\`)]:NAME:_default' \
'--cluster-endpoint=[API endpoint new nodes join (default\: the kubeconfig'\''s server; in a pod\: required, the EKS cluster'\''s endpoint)]:URL:_default' \
'-o+[Output format]:OUTPUT:((table\:"Aligned columns"
wide\:"Columns with more detail"
json\:"The versioned JSON document"
yaml\:"The versioned YAML document"
name\:"One \`kind/name\` per line"))' \
'--output=[Output format]:OUTPUT:((table\:"Aligned columns"
wide\:"Columns with more detail"
json\:"The versioned JSON document"
yaml\:"The versioned YAML document"
name\:"One \`kind/name\` per line"))' \
'--color=[Colour output (NO_COLOR is honoured under auto)]:COLOR:((auto\:"Only on a terminal, and never with \`NO_COLOR\`"
always\:"Always"
never\:"Never"))' \
'--log-format=[Stderr as text, or as one JSON object per line for log collectors]:FORMAT:((text\:"For people\: \`-v\` lines as text"
json\:"For log collectors\: one JSON object per line (timestamp, level, target, message, fields), the tool'\''s own stderr lines included"))' \
'--validate=[Fields of -f manifests the API server does not know\: strict refuses them (=true), warn reads on with a warning, ignore (=false) reads on silently]::MODE:((strict\:"Refuse the input, naming the field (and the closest known one)"
warn\:"Warn on stderr and read on"
ignore\:"Read on silently"))' \
'--no-aws[Do not call AWS\: instance facts and AMIs from the cluster only]' \
'--no-decision[Leave out the consolidation decision (the CONSOLIDATION column\: \`-\`), which evaluates the whole cluster — faster on a large one]' \
'--no-headers[Omit table headers]' \
'*-v[More logging on stderr (repeatable\: -v info, -vv debug; KUBECTL_KARPENTER_LOG overrides)]' \
'*--verbose[More logging on stderr (repeatable\: -v info, -vv debug; KUBECTL_KARPENTER_LOG overrides)]' \
'-q[Only errors on stderr]' \
'--quiet[Only errors on stderr]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
'-V[Print version]' \
'--version[Print version]' \
&& ret=0
;;
(drift)
_arguments "${_arguments_options[@]}" : \
'--kubeconfig=[Path to the kubeconfig file]:PATH:_default' \
'--context=[The kubeconfig context to use]:CONTEXT:_default' \
'--cluster=[The kubeconfig cluster to use]:CLUSTER:_default' \
'--user=[The kubeconfig user to use]:USER:_default' \
'-n+[Namespace, where it applies]:NAMESPACE:_default' \
'--namespace=[Namespace, where it applies]:NAMESPACE:_default' \
'--request-timeout=[Timeout of a single API request\: nothing received for this long fails it (default 60s; 0 = none)]:DURATION:_default' \
'--kubernetes-version=[Kubernetes version X.Y (default\: the API server'\''s; offline\: assumed and said so)]:X.Y:_default' \
'--region=[AWS region (default\: the AWS environment/config, else the EKS cluster ARN)]:REGION:_default' \
'--profile=[AWS shared-config profile]:PROFILE:_default' \
'--cluster-name=[EKS cluster name (default\: derived from the kubeconfig; in a pod\: required)]:CLUSTER_NAME:_default' \
'--instance-profile=[Instance profile of the nodes launched (default\: the node class'\''s \`instanceProfile\`, else the one holding its \`role\`, else \`aws.defaultInstanceProfile\`)]:NAME:_default' \
'--cluster-endpoint=[API endpoint new nodes join (default\: the kubeconfig'\''s server; in a pod\: required, the EKS cluster'\''s endpoint)]:URL:_default' \
'-o+[Output format]:OUTPUT:((table\:"Aligned columns"
wide\:"Columns with more detail"
json\:"The versioned JSON document"
yaml\:"The versioned YAML document"
name\:"One \`kind/name\` per line"))' \
'--output=[Output format]:OUTPUT:((table\:"Aligned columns"
wide\:"Columns with more detail"
json\:"The versioned JSON document"
yaml\:"The versioned YAML document"
name\:"One \`kind/name\` per line"))' \
'--color=[Colour output (NO_COLOR is honoured under auto)]:COLOR:((auto\:"Only on a terminal, and never with \`NO_COLOR\`"
always\:"Always"
never\:"Never"))' \
'--log-format=[Stderr as text, or as one JSON object per line for log collectors]:FORMAT:((text\:"For people\: \`-v\` lines as text"
json\:"For log collectors\: one JSON object per line (timestamp, level, target, message, fields), the tool'\''s own stderr lines included"))' \
'--validate=[Fields of -f manifests the API server does not know\: strict refuses them (=true), warn reads on with a warning, ignore (=false) reads on silently]::MODE:((strict\:"Refuse the input, naming the field (and the closest known one)"
warn\:"Warn on stderr and read on"
ignore\:"Read on silently"))' \
'--no-headers[Omit table headers]' \
'*-v[More logging on stderr (repeatable\: -v info, -vv debug; KUBECTL_KARPENTER_LOG overrides)]' \
'*--verbose[More logging on stderr (repeatable\: -v info, -vv debug; KUBECTL_KARPENTER_LOG overrides)]' \
'-q[Only errors on stderr]' \
'--quiet[Only errors on stderr]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
'-V[Print version]' \
'--version[Print version]' \
":: :_kubectl-karpenter__subcmd__drift_commands" \
"*::: :->drift" \
&& ret=0

    case $state in
    (drift)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:kubectl-karpenter-drift-command-$line[1]:"
        case $line[1] in
            (check)
_arguments "${_arguments_options[@]}" : \
'*-f+[Manifest files or directories (\`-\` for stdin)\: offline mode]:PATH:_default' \
'*--filename=[Manifest files or directories (\`-\` for stdin)\: offline mode]:PATH:_default' \
'*--nodepool=[Only nodes of these NodePools (or Provisioners)]:NAME:_default' \
'-l+[Only nodes matching this label selector (\`k=v,k!=v,k in (a,b),k notin (a),k,!k\`)]:SELECTOR:_default' \
'--selector=[Only nodes matching this label selector (\`k=v,k!=v,k in (a,b),k notin (a),k,!k\`)]:SELECTOR:_default' \
'*--ssm-param=[Offline SSM parameter values for AMI aliases and ssmParameter terms (repeatable)]:NAME=VALUE:_default' \
'--catalog=[Replace the instance-type catalog used for InstanceTypeNotFound (JSON or YAML)]:FILE:_default' \
'--kubeconfig=[Path to the kubeconfig file]:PATH:_default' \
'--context=[The kubeconfig context to use]:CONTEXT:_default' \
'--cluster=[The kubeconfig cluster to use]:CLUSTER:_default' \
'--user=[The kubeconfig user to use]:USER:_default' \
'-n+[Namespace, where it applies]:NAMESPACE:_default' \
'--namespace=[Namespace, where it applies]:NAMESPACE:_default' \
'--request-timeout=[Timeout of a single API request\: nothing received for this long fails it (default 60s; 0 = none)]:DURATION:_default' \
'--kubernetes-version=[Kubernetes version X.Y (default\: the API server'\''s; offline\: assumed and said so)]:X.Y:_default' \
'--region=[AWS region (default\: the AWS environment/config, else the EKS cluster ARN)]:REGION:_default' \
'--profile=[AWS shared-config profile]:PROFILE:_default' \
'--cluster-name=[EKS cluster name (default\: derived from the kubeconfig; in a pod\: required)]:CLUSTER_NAME:_default' \
'--instance-profile=[Instance profile of the nodes launched (default\: the node class'\''s \`instanceProfile\`, else the one holding its \`role\`, else \`aws.defaultInstanceProfile\`)]:NAME:_default' \
'--cluster-endpoint=[API endpoint new nodes join (default\: the kubeconfig'\''s server; in a pod\: required, the EKS cluster'\''s endpoint)]:URL:_default' \
'-o+[Output format]:OUTPUT:((table\:"Aligned columns"
wide\:"Columns with more detail"
json\:"The versioned JSON document"
yaml\:"The versioned YAML document"
name\:"One \`kind/name\` per line"))' \
'--output=[Output format]:OUTPUT:((table\:"Aligned columns"
wide\:"Columns with more detail"
json\:"The versioned JSON document"
yaml\:"The versioned YAML document"
name\:"One \`kind/name\` per line"))' \
'--color=[Colour output (NO_COLOR is honoured under auto)]:COLOR:((auto\:"Only on a terminal, and never with \`NO_COLOR\`"
always\:"Always"
never\:"Never"))' \
'--log-format=[Stderr as text, or as one JSON object per line for log collectors]:FORMAT:((text\:"For people\: \`-v\` lines as text"
json\:"For log collectors\: one JSON object per line (timestamp, level, target, message, fields), the tool'\''s own stderr lines included"))' \
'--validate=[Fields of -f manifests the API server does not know\: strict refuses them (=true), warn reads on with a warning, ignore (=false) reads on silently]::MODE:((strict\:"Refuse the input, naming the field (and the closest known one)"
warn\:"Warn on stderr and read on"
ignore\:"Read on silently"))' \
'--mark[Write the result to the cluster (needs a cluster)]' \
'--dry-run[With --mark\: say which nodes'\'' markers would change and write nothing (drift check itself changes nothing)]' \
'--no-headers[Omit table headers]' \
'*-v[More logging on stderr (repeatable\: -v info, -vv debug; KUBECTL_KARPENTER_LOG overrides)]' \
'*--verbose[More logging on stderr (repeatable\: -v info, -vv debug; KUBECTL_KARPENTER_LOG overrides)]' \
'-q[Only errors on stderr]' \
'--quiet[Only errors on stderr]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
'-V[Print version]' \
'--version[Print version]' \
'*::nodes -- Only these nodes (default\: every managed node):_default' \
&& ret=0
;;
(replace)
_arguments "${_arguments_options[@]}" : \
'*--nodepool=[Only nodes of these NodePools (or Provisioners)]:NAME:_default' \
'-l+[Only nodes matching this label selector]:SELECTOR:_default' \
'--selector=[Only nodes matching this label selector]:SELECTOR:_default' \
'--max-parallel=[At most this many nodes in replacement at once (budgets may allow fewer)]:N:_default' \
'--timeout=[How long a drain may take per node (e.g. 15m)]:DURATION:_default' \
'--ready-timeout=[How long a replacement may take to become Ready before rolling back]:DURATION:_default' \
'--catalog=[Replace the instance-type catalog (JSON or YAML)]:FILE:_default' \
'--min-values-policy=[What an unmet NodePool minValues does, as the controller'\''s --min-values-policy / MIN_VALUES_POLICY\: Strict (the pod waits) or BestEffort (minValues relaxed, the NodeClaim annotated). Live, the running controller'\''s setting is the default]:POLICY:(Strict BestEffort)' \
'--preference-policy=[Whether pods'\'' preferences (preferred node and pod affinity and anti-affinity, ScheduleAnyway topology spreads) count, as the controller'\''s --preference-policy / PREFERENCE_POLICY\: Respect (required until relaxed) or Ignore. Live, the running controller'\''s setting is the default]:POLICY:(Respect Ignore)' \
'--feature-gates=[Feature gates, as the controller'\''s FEATURE_GATES (\`CapacityBuffer=true\`\: the buffers'\'' virtual pods take their room when replacements are planned; \`ReservedCapacity=false\`\: replacements target no capacity reservation). Default\: the controller'\''s]:GATES:_default' \
'--vm-memory-overhead-percent=[The AWS controller'\''s VM_MEMORY_OVERHEAD_PERCENT (default 0.075)\: the memory share each instance type'\''s capacity loses. Live, the running controller'\''s is the default]:FRACTION:_default' \
'--reserved-enis=[The AWS controller'\''s RESERVED_ENIS (default 0)\: ENIs that give no pods. Live, the running controller'\''s is the default]:N:_default' \
'--wait-for-lease=[Wait this long for another run'\''s operator lease instead of refusing (default 10m; \`forever\`\: a standby replica in a pod)]::DURATION:_default' \
'--lease-namespace=[Namespace of the operator lease (a coordination.k8s.io Lease named kubectl-karpenter)]:NAMESPACE:_default' \
'--kubeconfig=[Path to the kubeconfig file]:PATH:_default' \
'--context=[The kubeconfig context to use]:CONTEXT:_default' \
'--cluster=[The kubeconfig cluster to use]:CLUSTER:_default' \
'--user=[The kubeconfig user to use]:USER:_default' \
'-n+[Namespace, where it applies]:NAMESPACE:_default' \
'--namespace=[Namespace, where it applies]:NAMESPACE:_default' \
'--request-timeout=[Timeout of a single API request\: nothing received for this long fails it (default 60s; 0 = none)]:DURATION:_default' \
'--kubernetes-version=[Kubernetes version X.Y (default\: the API server'\''s; offline\: assumed and said so)]:X.Y:_default' \
'--region=[AWS region (default\: the AWS environment/config, else the EKS cluster ARN)]:REGION:_default' \
'--profile=[AWS shared-config profile]:PROFILE:_default' \
'--cluster-name=[EKS cluster name (default\: derived from the kubeconfig; in a pod\: required)]:CLUSTER_NAME:_default' \
'--instance-profile=[Instance profile of the nodes launched (default\: the node class'\''s \`instanceProfile\`, else the one holding its \`role\`, else \`aws.defaultInstanceProfile\`)]:NAME:_default' \
'--cluster-endpoint=[API endpoint new nodes join (default\: the kubeconfig'\''s server; in a pod\: required, the EKS cluster'\''s endpoint)]:URL:_default' \
'-o+[Output format]:OUTPUT:((table\:"Aligned columns"
wide\:"Columns with more detail"
json\:"The versioned JSON document"
yaml\:"The versioned YAML document"
name\:"One \`kind/name\` per line"))' \
'--output=[Output format]:OUTPUT:((table\:"Aligned columns"
wide\:"Columns with more detail"
json\:"The versioned JSON document"
yaml\:"The versioned YAML document"
name\:"One \`kind/name\` per line"))' \
'--color=[Colour output (NO_COLOR is honoured under auto)]:COLOR:((auto\:"Only on a terminal, and never with \`NO_COLOR\`"
always\:"Always"
never\:"Never"))' \
'--log-format=[Stderr as text, or as one JSON object per line for log collectors]:FORMAT:((text\:"For people\: \`-v\` lines as text"
json\:"For log collectors\: one JSON object per line (timestamp, level, target, message, fields), the tool'\''s own stderr lines included"))' \
'--validate=[Fields of -f manifests the API server does not know\: strict refuses them (=true), warn reads on with a warning, ignore (=false) reads on silently]::MODE:((strict\:"Refuse the input, naming the field (and the closest known one)"
warn\:"Warn on stderr and read on"
ignore\:"Read on silently"))' \
'--dry-run[Print the plan and change nothing]' \
'(--dry-run)--watch[Keep replacing as nodes drift, until Ctrl-C]' \
'-y[Replace without asking]' \
'--yes[Replace without asking]' \
'--via-controller[Let the running Karpenter controller replace the nodes\: delete their NodeClaims (Machines, Nodes) one budget'\''s worth at a time, wait for each to be replaced]' \
'--force[Act although a Karpenter controller runs, and evict do-not-disrupt pods]' \
'--no-headers[Omit table headers]' \
'*-v[More logging on stderr (repeatable\: -v info, -vv debug; KUBECTL_KARPENTER_LOG overrides)]' \
'*--verbose[More logging on stderr (repeatable\: -v info, -vv debug; KUBECTL_KARPENTER_LOG overrides)]' \
'-q[Only errors on stderr]' \
'--quiet[Only errors on stderr]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
'-V[Print version]' \
'--version[Print version]' \
'*::nodes -- Replace these nodes, drifted or not (default\: every drifted managed node):_default' \
&& ret=0
;;
(help)
_arguments "${_arguments_options[@]}" : \
":: :_kubectl-karpenter__subcmd__drift__subcmd__help_commands" \
"*::: :->help" \
&& ret=0

    case $state in
    (help)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:kubectl-karpenter-drift-help-command-$line[1]:"
        case $line[1] in
            (check)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(replace)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(help)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
        esac
    ;;
esac
;;
        esac
    ;;
esac
;;
(consolidate)
_arguments "${_arguments_options[@]}" : \
'*-f+[Manifest files or directories (\`-\` for stdin)\: offline mode]:PATH:_default' \
'*--filename=[Manifest files or directories (\`-\` for stdin)\: offline mode]:PATH:_default' \
'*--nodepool=[Only nodes of these NodePools (or Provisioners) in the report]:NAME:_default' \
'--catalog=[Replace the instance-type catalog (JSON or YAML)]:FILE:_default' \
'--now=[The instant evaluated, RFC 3339 (default\: now)]:RFC3339:_default' \
'--feature-gates=[Feature gates, as the controller'\''s FEATURE_GATES (\`SpotToSpotConsolidation=true\`, \`CapacityBuffer=true\`, \`ReservedCapacity=false\`). Live, the running controller'\''s gates are the default]:GATES:_default' \
'--min-values-policy=[What an unmet NodePool minValues does, as the controller'\''s --min-values-policy / MIN_VALUES_POLICY\: Strict (the pod waits) or BestEffort (minValues relaxed, the NodeClaim annotated). Live, the running controller'\''s setting is the default]:POLICY:(Strict BestEffort)' \
'--preference-policy=[Whether pods'\'' preferences (preferred node and pod affinity and anti-affinity, ScheduleAnyway topology spreads) count, as the controller'\''s --preference-policy / PREFERENCE_POLICY\: Respect (required until relaxed) or Ignore. Live, the running controller'\''s setting is the default]:POLICY:(Respect Ignore)' \
'--vm-memory-overhead-percent=[The AWS controller'\''s VM_MEMORY_OVERHEAD_PERCENT (default 0.075)\: the memory share each instance type'\''s capacity loses. Live, the running controller'\''s is the default]:FRACTION:_default' \
'--reserved-enis=[The AWS controller'\''s RESERVED_ENIS (default 0)\: ENIs that give no pods. Live, the running controller'\''s is the default]:N:_default' \
'--timeout=[How long a node'\''s drain may take (also how long a PDB at zero is waited for)]:DURATION:_default' \
'--ready-timeout=[How long a replacement may take to be Ready before the node is rolled back]:DURATION:_default' \
'--wait-for-lease=[Wait this long for another run'\''s operator lease instead of refusing (default 10m; \`forever\`\: a standby replica in a pod)]::DURATION:_default' \
'--lease-namespace=[Namespace of the operator lease (a coordination.k8s.io Lease named kubectl-karpenter)]:NAMESPACE:_default' \
'--health-addr=[With --watch\: serve /healthz (the loop runs) and /readyz (holding the operator lease, the cluster read) on this address, e.g. \:8081]:ADDR:_default' \
'--kubeconfig=[Path to the kubeconfig file]:PATH:_default' \
'--context=[The kubeconfig context to use]:CONTEXT:_default' \
'--cluster=[The kubeconfig cluster to use]:CLUSTER:_default' \
'--user=[The kubeconfig user to use]:USER:_default' \
'-n+[Namespace, where it applies]:NAMESPACE:_default' \
'--namespace=[Namespace, where it applies]:NAMESPACE:_default' \
'--request-timeout=[Timeout of a single API request\: nothing received for this long fails it (default 60s; 0 = none)]:DURATION:_default' \
'--kubernetes-version=[Kubernetes version X.Y (default\: the API server'\''s; offline\: assumed and said so)]:X.Y:_default' \
'--region=[AWS region (default\: the AWS environment/config, else the EKS cluster ARN)]:REGION:_default' \
'--profile=[AWS shared-config profile]:PROFILE:_default' \
'--cluster-name=[EKS cluster name (default\: derived from the kubeconfig; in a pod\: required)]:CLUSTER_NAME:_default' \
'--instance-profile=[Instance profile of the nodes launched (default\: the node class'\''s \`instanceProfile\`, else the one holding its \`role\`, else \`aws.defaultInstanceProfile\`)]:NAME:_default' \
'--cluster-endpoint=[API endpoint new nodes join (default\: the kubeconfig'\''s server; in a pod\: required, the EKS cluster'\''s endpoint)]:URL:_default' \
'-o+[Output format]:OUTPUT:((table\:"Aligned columns"
wide\:"Columns with more detail"
json\:"The versioned JSON document"
yaml\:"The versioned YAML document"
name\:"One \`kind/name\` per line"))' \
'--output=[Output format]:OUTPUT:((table\:"Aligned columns"
wide\:"Columns with more detail"
json\:"The versioned JSON document"
yaml\:"The versioned YAML document"
name\:"One \`kind/name\` per line"))' \
'--color=[Colour output (NO_COLOR is honoured under auto)]:COLOR:((auto\:"Only on a terminal, and never with \`NO_COLOR\`"
always\:"Always"
never\:"Never"))' \
'--log-format=[Stderr as text, or as one JSON object per line for log collectors]:FORMAT:((text\:"For people\: \`-v\` lines as text"
json\:"For log collectors\: one JSON object per line (timestamp, level, target, message, fields), the tool'\''s own stderr lines included"))' \
'--validate=[Fields of -f manifests the API server does not know\: strict refuses them (=true), warn reads on with a warning, ignore (=false) reads on silently]::MODE:((strict\:"Refuse the input, naming the field (and the closest known one)"
warn\:"Warn on stderr and read on"
ignore\:"Read on silently"))' \
'--dry-run[Show what --yes would do now (the first action, node by node) and change nothing (live)]' \
'(--dry-run)-y[Carry the decisions out without asking (live)\: deletes and replacements through the replace pipeline, deciding again after each action]' \
'(--dry-run)--yes[Carry the decisions out without asking (live)\: deletes and replacements through the replace pipeline, deciding again after each action]' \
'(--dry-run)--watch[Keep consolidating as the cluster changes, until Ctrl-C (asks once on a terminal)]' \
'--force[Act although a Karpenter controller runs (consolidation is its job there)]' \
'--no-headers[Omit table headers]' \
'*-v[More logging on stderr (repeatable\: -v info, -vv debug; KUBECTL_KARPENTER_LOG overrides)]' \
'*--verbose[More logging on stderr (repeatable\: -v info, -vv debug; KUBECTL_KARPENTER_LOG overrides)]' \
'-q[Only errors on stderr]' \
'--quiet[Only errors on stderr]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
'-V[Print version]' \
'--version[Print version]' \
'*::nodes -- Only these nodes in the report (default\: every managed node):_default' \
&& ret=0
;;
(enable-drift)
_arguments "${_arguments_options[@]}" : \
'--karpenter-namespace=[Namespace of the Karpenter controller Deployment (default\: found in any namespace; \`-n\` works too)]:NS:_default' \
'--timeout=[How long to wait for the controller'\''s rollout (e.g. 10m)]:DURATION:_default' \
'--kubeconfig=[Path to the kubeconfig file]:PATH:_default' \
'--context=[The kubeconfig context to use]:CONTEXT:_default' \
'--cluster=[The kubeconfig cluster to use]:CLUSTER:_default' \
'--user=[The kubeconfig user to use]:USER:_default' \
'-n+[Namespace, where it applies]:NAMESPACE:_default' \
'--namespace=[Namespace, where it applies]:NAMESPACE:_default' \
'--request-timeout=[Timeout of a single API request\: nothing received for this long fails it (default 60s; 0 = none)]:DURATION:_default' \
'--kubernetes-version=[Kubernetes version X.Y (default\: the API server'\''s; offline\: assumed and said so)]:X.Y:_default' \
'--region=[AWS region (default\: the AWS environment/config, else the EKS cluster ARN)]:REGION:_default' \
'--profile=[AWS shared-config profile]:PROFILE:_default' \
'--cluster-name=[EKS cluster name (default\: derived from the kubeconfig; in a pod\: required)]:CLUSTER_NAME:_default' \
'--instance-profile=[Instance profile of the nodes launched (default\: the node class'\''s \`instanceProfile\`, else the one holding its \`role\`, else \`aws.defaultInstanceProfile\`)]:NAME:_default' \
'--cluster-endpoint=[API endpoint new nodes join (default\: the kubeconfig'\''s server; in a pod\: required, the EKS cluster'\''s endpoint)]:URL:_default' \
'-o+[Output format]:OUTPUT:((table\:"Aligned columns"
wide\:"Columns with more detail"
json\:"The versioned JSON document"
yaml\:"The versioned YAML document"
name\:"One \`kind/name\` per line"))' \
'--output=[Output format]:OUTPUT:((table\:"Aligned columns"
wide\:"Columns with more detail"
json\:"The versioned JSON document"
yaml\:"The versioned YAML document"
name\:"One \`kind/name\` per line"))' \
'--color=[Colour output (NO_COLOR is honoured under auto)]:COLOR:((auto\:"Only on a terminal, and never with \`NO_COLOR\`"
always\:"Always"
never\:"Never"))' \
'--log-format=[Stderr as text, or as one JSON object per line for log collectors]:FORMAT:((text\:"For people\: \`-v\` lines as text"
json\:"For log collectors\: one JSON object per line (timestamp, level, target, message, fields), the tool'\''s own stderr lines included"))' \
'--validate=[Fields of -f manifests the API server does not know\: strict refuses them (=true), warn reads on with a warning, ignore (=false) reads on silently]::MODE:((strict\:"Refuse the input, naming the field (and the closest known one)"
warn\:"Warn on stderr and read on"
ignore\:"Read on silently"))' \
'--no-restart[v0.21–v0.31\: only edit the ConfigMap, do not restart the controller (it reads its settings at startup, so the change waits for its next restart)]' \
'--dry-run[Print what would change and change nothing]' \
'-y[Change without asking]' \
'--yes[Change without asking]' \
'--no-headers[Omit table headers]' \
'*-v[More logging on stderr (repeatable\: -v info, -vv debug; KUBECTL_KARPENTER_LOG overrides)]' \
'*--verbose[More logging on stderr (repeatable\: -v info, -vv debug; KUBECTL_KARPENTER_LOG overrides)]' \
'-q[Only errors on stderr]' \
'--quiet[Only errors on stderr]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
'-V[Print version]' \
'--version[Print version]' \
&& ret=0
;;
(disable-drift)
_arguments "${_arguments_options[@]}" : \
'--karpenter-namespace=[Namespace of the Karpenter controller Deployment (default\: found in any namespace; \`-n\` works too)]:NS:_default' \
'--timeout=[How long to wait for the controller'\''s rollout (e.g. 10m)]:DURATION:_default' \
'--kubeconfig=[Path to the kubeconfig file]:PATH:_default' \
'--context=[The kubeconfig context to use]:CONTEXT:_default' \
'--cluster=[The kubeconfig cluster to use]:CLUSTER:_default' \
'--user=[The kubeconfig user to use]:USER:_default' \
'-n+[Namespace, where it applies]:NAMESPACE:_default' \
'--namespace=[Namespace, where it applies]:NAMESPACE:_default' \
'--request-timeout=[Timeout of a single API request\: nothing received for this long fails it (default 60s; 0 = none)]:DURATION:_default' \
'--kubernetes-version=[Kubernetes version X.Y (default\: the API server'\''s; offline\: assumed and said so)]:X.Y:_default' \
'--region=[AWS region (default\: the AWS environment/config, else the EKS cluster ARN)]:REGION:_default' \
'--profile=[AWS shared-config profile]:PROFILE:_default' \
'--cluster-name=[EKS cluster name (default\: derived from the kubeconfig; in a pod\: required)]:CLUSTER_NAME:_default' \
'--instance-profile=[Instance profile of the nodes launched (default\: the node class'\''s \`instanceProfile\`, else the one holding its \`role\`, else \`aws.defaultInstanceProfile\`)]:NAME:_default' \
'--cluster-endpoint=[API endpoint new nodes join (default\: the kubeconfig'\''s server; in a pod\: required, the EKS cluster'\''s endpoint)]:URL:_default' \
'-o+[Output format]:OUTPUT:((table\:"Aligned columns"
wide\:"Columns with more detail"
json\:"The versioned JSON document"
yaml\:"The versioned YAML document"
name\:"One \`kind/name\` per line"))' \
'--output=[Output format]:OUTPUT:((table\:"Aligned columns"
wide\:"Columns with more detail"
json\:"The versioned JSON document"
yaml\:"The versioned YAML document"
name\:"One \`kind/name\` per line"))' \
'--color=[Colour output (NO_COLOR is honoured under auto)]:COLOR:((auto\:"Only on a terminal, and never with \`NO_COLOR\`"
always\:"Always"
never\:"Never"))' \
'--log-format=[Stderr as text, or as one JSON object per line for log collectors]:FORMAT:((text\:"For people\: \`-v\` lines as text"
json\:"For log collectors\: one JSON object per line (timestamp, level, target, message, fields), the tool'\''s own stderr lines included"))' \
'--validate=[Fields of -f manifests the API server does not know\: strict refuses them (=true), warn reads on with a warning, ignore (=false) reads on silently]::MODE:((strict\:"Refuse the input, naming the field (and the closest known one)"
warn\:"Warn on stderr and read on"
ignore\:"Read on silently"))' \
'--no-restart[v0.21–v0.31\: only edit the ConfigMap, do not restart the controller (it reads its settings at startup, so the change waits for its next restart)]' \
'--dry-run[Print what would change and change nothing]' \
'-y[Change without asking]' \
'--yes[Change without asking]' \
'--no-headers[Omit table headers]' \
'*-v[More logging on stderr (repeatable\: -v info, -vv debug; KUBECTL_KARPENTER_LOG overrides)]' \
'*--verbose[More logging on stderr (repeatable\: -v info, -vv debug; KUBECTL_KARPENTER_LOG overrides)]' \
'-q[Only errors on stderr]' \
'--quiet[Only errors on stderr]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
'-V[Print version]' \
'--version[Print version]' \
&& ret=0
;;
(version)
_arguments "${_arguments_options[@]}" : \
'--kubeconfig=[Path to the kubeconfig file]:PATH:_default' \
'--context=[The kubeconfig context to use]:CONTEXT:_default' \
'--cluster=[The kubeconfig cluster to use]:CLUSTER:_default' \
'--user=[The kubeconfig user to use]:USER:_default' \
'-n+[Namespace, where it applies]:NAMESPACE:_default' \
'--namespace=[Namespace, where it applies]:NAMESPACE:_default' \
'--request-timeout=[Timeout of a single API request\: nothing received for this long fails it (default 60s; 0 = none)]:DURATION:_default' \
'--kubernetes-version=[Kubernetes version X.Y (default\: the API server'\''s; offline\: assumed and said so)]:X.Y:_default' \
'--region=[AWS region (default\: the AWS environment/config, else the EKS cluster ARN)]:REGION:_default' \
'--profile=[AWS shared-config profile]:PROFILE:_default' \
'--cluster-name=[EKS cluster name (default\: derived from the kubeconfig; in a pod\: required)]:CLUSTER_NAME:_default' \
'--instance-profile=[Instance profile of the nodes launched (default\: the node class'\''s \`instanceProfile\`, else the one holding its \`role\`, else \`aws.defaultInstanceProfile\`)]:NAME:_default' \
'--cluster-endpoint=[API endpoint new nodes join (default\: the kubeconfig'\''s server; in a pod\: required, the EKS cluster'\''s endpoint)]:URL:_default' \
'-o+[Output format]:OUTPUT:((table\:"Aligned columns"
wide\:"Columns with more detail"
json\:"The versioned JSON document"
yaml\:"The versioned YAML document"
name\:"One \`kind/name\` per line"))' \
'--output=[Output format]:OUTPUT:((table\:"Aligned columns"
wide\:"Columns with more detail"
json\:"The versioned JSON document"
yaml\:"The versioned YAML document"
name\:"One \`kind/name\` per line"))' \
'--color=[Colour output (NO_COLOR is honoured under auto)]:COLOR:((auto\:"Only on a terminal, and never with \`NO_COLOR\`"
always\:"Always"
never\:"Never"))' \
'--log-format=[Stderr as text, or as one JSON object per line for log collectors]:FORMAT:((text\:"For people\: \`-v\` lines as text"
json\:"For log collectors\: one JSON object per line (timestamp, level, target, message, fields), the tool'\''s own stderr lines included"))' \
'--validate=[Fields of -f manifests the API server does not know\: strict refuses them (=true), warn reads on with a warning, ignore (=false) reads on silently]::MODE:((strict\:"Refuse the input, naming the field (and the closest known one)"
warn\:"Warn on stderr and read on"
ignore\:"Read on silently"))' \
'--no-headers[Omit table headers]' \
'*-v[More logging on stderr (repeatable\: -v info, -vv debug; KUBECTL_KARPENTER_LOG overrides)]' \
'*--verbose[More logging on stderr (repeatable\: -v info, -vv debug; KUBECTL_KARPENTER_LOG overrides)]' \
'-q[Only errors on stderr]' \
'--quiet[Only errors on stderr]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
'-V[Print version]' \
'--version[Print version]' \
&& ret=0
;;
(completion)
_arguments "${_arguments_options[@]}" : \
'--kubeconfig=[Path to the kubeconfig file]:PATH:_default' \
'--context=[The kubeconfig context to use]:CONTEXT:_default' \
'--cluster=[The kubeconfig cluster to use]:CLUSTER:_default' \
'--user=[The kubeconfig user to use]:USER:_default' \
'-n+[Namespace, where it applies]:NAMESPACE:_default' \
'--namespace=[Namespace, where it applies]:NAMESPACE:_default' \
'--request-timeout=[Timeout of a single API request\: nothing received for this long fails it (default 60s; 0 = none)]:DURATION:_default' \
'--kubernetes-version=[Kubernetes version X.Y (default\: the API server'\''s; offline\: assumed and said so)]:X.Y:_default' \
'--region=[AWS region (default\: the AWS environment/config, else the EKS cluster ARN)]:REGION:_default' \
'--profile=[AWS shared-config profile]:PROFILE:_default' \
'--cluster-name=[EKS cluster name (default\: derived from the kubeconfig; in a pod\: required)]:CLUSTER_NAME:_default' \
'--instance-profile=[Instance profile of the nodes launched (default\: the node class'\''s \`instanceProfile\`, else the one holding its \`role\`, else \`aws.defaultInstanceProfile\`)]:NAME:_default' \
'--cluster-endpoint=[API endpoint new nodes join (default\: the kubeconfig'\''s server; in a pod\: required, the EKS cluster'\''s endpoint)]:URL:_default' \
'-o+[Output format]:OUTPUT:((table\:"Aligned columns"
wide\:"Columns with more detail"
json\:"The versioned JSON document"
yaml\:"The versioned YAML document"
name\:"One \`kind/name\` per line"))' \
'--output=[Output format]:OUTPUT:((table\:"Aligned columns"
wide\:"Columns with more detail"
json\:"The versioned JSON document"
yaml\:"The versioned YAML document"
name\:"One \`kind/name\` per line"))' \
'--color=[Colour output (NO_COLOR is honoured under auto)]:COLOR:((auto\:"Only on a terminal, and never with \`NO_COLOR\`"
always\:"Always"
never\:"Never"))' \
'--log-format=[Stderr as text, or as one JSON object per line for log collectors]:FORMAT:((text\:"For people\: \`-v\` lines as text"
json\:"For log collectors\: one JSON object per line (timestamp, level, target, message, fields), the tool'\''s own stderr lines included"))' \
'--validate=[Fields of -f manifests the API server does not know\: strict refuses them (=true), warn reads on with a warning, ignore (=false) reads on silently]::MODE:((strict\:"Refuse the input, naming the field (and the closest known one)"
warn\:"Warn on stderr and read on"
ignore\:"Read on silently"))' \
'--no-headers[Omit table headers]' \
'*-v[More logging on stderr (repeatable\: -v info, -vv debug; KUBECTL_KARPENTER_LOG overrides)]' \
'*--verbose[More logging on stderr (repeatable\: -v info, -vv debug; KUBECTL_KARPENTER_LOG overrides)]' \
'-q[Only errors on stderr]' \
'--quiet[Only errors on stderr]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
'-V[Print version]' \
'--version[Print version]' \
':shell -- The shell:(bash zsh fish powershell)' \
&& ret=0
;;
(help)
_arguments "${_arguments_options[@]}" : \
":: :_kubectl-karpenter__subcmd__help_commands" \
"*::: :->help" \
&& ret=0

    case $state in
    (help)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:kubectl-karpenter-help-command-$line[1]:"
        case $line[1] in
            (provision)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(ami)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(convert)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(nodes)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(drift)
_arguments "${_arguments_options[@]}" : \
":: :_kubectl-karpenter__subcmd__help__subcmd__drift_commands" \
"*::: :->drift" \
&& ret=0

    case $state in
    (drift)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:kubectl-karpenter-help-drift-command-$line[1]:"
        case $line[1] in
            (check)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(replace)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
        esac
    ;;
esac
;;
(consolidate)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(enable-drift)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(disable-drift)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(version)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(completion)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(help)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
        esac
    ;;
esac
;;
        esac
    ;;
esac
}

(( $+functions[_kubectl-karpenter_commands] )) ||
_kubectl-karpenter_commands() {
    local commands; commands=(
'provision:Plan the capacity Karpenter would launch for pending pods' \
'ami:Show the AMIs each node class resolves to, and from which SSM parameter or filter' \
'convert:Convert v1alpha5 and v1beta1 Karpenter manifests to v1' \
'nodes:Show managed nodes\: pool, type, zone, capacity type, AMI, age, drift, requests vs allocatable, \$/hour, the consolidation decision, and totals per pool' \
'drift:Detect drifted nodes and explain why (drift check)' \
'consolidate:What Karpenter'\''s disruption controller would do to each node (expiration, drift, emptiness, consolidation), and why not for the others; --yes carries out expiration and consolidation' \
'enable-drift:Turn Karpenter'\''s drift feature on in the running controller (v0.21–v0.37)' \
'disable-drift:Turn Karpenter'\''s drift feature off in the running controller (v0.21–v0.37)' \
'version:Print the version' \
'completion:Print a shell completion script (bash, zsh, fish, powershell)' \
'help:Print this message or the help of the given subcommand(s)' \
    )
    _describe -t commands 'kubectl-karpenter commands' commands "$@"
}
(( $+functions[_kubectl-karpenter__subcmd__ami_commands] )) ||
_kubectl-karpenter__subcmd__ami_commands() {
    local commands; commands=()
    _describe -t commands 'kubectl-karpenter ami commands' commands "$@"
}
(( $+functions[_kubectl-karpenter__subcmd__completion_commands] )) ||
_kubectl-karpenter__subcmd__completion_commands() {
    local commands; commands=()
    _describe -t commands 'kubectl-karpenter completion commands' commands "$@"
}
(( $+functions[_kubectl-karpenter__subcmd__consolidate_commands] )) ||
_kubectl-karpenter__subcmd__consolidate_commands() {
    local commands; commands=()
    _describe -t commands 'kubectl-karpenter consolidate commands' commands "$@"
}
(( $+functions[_kubectl-karpenter__subcmd__convert_commands] )) ||
_kubectl-karpenter__subcmd__convert_commands() {
    local commands; commands=()
    _describe -t commands 'kubectl-karpenter convert commands' commands "$@"
}
(( $+functions[_kubectl-karpenter__subcmd__disable-drift_commands] )) ||
_kubectl-karpenter__subcmd__disable-drift_commands() {
    local commands; commands=()
    _describe -t commands 'kubectl-karpenter disable-drift commands' commands "$@"
}
(( $+functions[_kubectl-karpenter__subcmd__drift_commands] )) ||
_kubectl-karpenter__subcmd__drift_commands() {
    local commands; commands=(
'check:Evaluate every managed node and explain why it drifted (exit 1 when any did)' \
'replace:Replace drifted (or named) nodes safely\: replacement first, cordon, drain, terminate' \
'help:Print this message or the help of the given subcommand(s)' \
    )
    _describe -t commands 'kubectl-karpenter drift commands' commands "$@"
}
(( $+functions[_kubectl-karpenter__subcmd__drift__subcmd__check_commands] )) ||
_kubectl-karpenter__subcmd__drift__subcmd__check_commands() {
    local commands; commands=()
    _describe -t commands 'kubectl-karpenter drift check commands' commands "$@"
}
(( $+functions[_kubectl-karpenter__subcmd__drift__subcmd__help_commands] )) ||
_kubectl-karpenter__subcmd__drift__subcmd__help_commands() {
    local commands; commands=(
'check:Evaluate every managed node and explain why it drifted (exit 1 when any did)' \
'replace:Replace drifted (or named) nodes safely\: replacement first, cordon, drain, terminate' \
'help:Print this message or the help of the given subcommand(s)' \
    )
    _describe -t commands 'kubectl-karpenter drift help commands' commands "$@"
}
(( $+functions[_kubectl-karpenter__subcmd__drift__subcmd__help__subcmd__check_commands] )) ||
_kubectl-karpenter__subcmd__drift__subcmd__help__subcmd__check_commands() {
    local commands; commands=()
    _describe -t commands 'kubectl-karpenter drift help check commands' commands "$@"
}
(( $+functions[_kubectl-karpenter__subcmd__drift__subcmd__help__subcmd__help_commands] )) ||
_kubectl-karpenter__subcmd__drift__subcmd__help__subcmd__help_commands() {
    local commands; commands=()
    _describe -t commands 'kubectl-karpenter drift help help commands' commands "$@"
}
(( $+functions[_kubectl-karpenter__subcmd__drift__subcmd__help__subcmd__replace_commands] )) ||
_kubectl-karpenter__subcmd__drift__subcmd__help__subcmd__replace_commands() {
    local commands; commands=()
    _describe -t commands 'kubectl-karpenter drift help replace commands' commands "$@"
}
(( $+functions[_kubectl-karpenter__subcmd__drift__subcmd__replace_commands] )) ||
_kubectl-karpenter__subcmd__drift__subcmd__replace_commands() {
    local commands; commands=()
    _describe -t commands 'kubectl-karpenter drift replace commands' commands "$@"
}
(( $+functions[_kubectl-karpenter__subcmd__enable-drift_commands] )) ||
_kubectl-karpenter__subcmd__enable-drift_commands() {
    local commands; commands=()
    _describe -t commands 'kubectl-karpenter enable-drift commands' commands "$@"
}
(( $+functions[_kubectl-karpenter__subcmd__help_commands] )) ||
_kubectl-karpenter__subcmd__help_commands() {
    local commands; commands=(
'provision:Plan the capacity Karpenter would launch for pending pods' \
'ami:Show the AMIs each node class resolves to, and from which SSM parameter or filter' \
'convert:Convert v1alpha5 and v1beta1 Karpenter manifests to v1' \
'nodes:Show managed nodes\: pool, type, zone, capacity type, AMI, age, drift, requests vs allocatable, \$/hour, the consolidation decision, and totals per pool' \
'drift:Detect drifted nodes and explain why (drift check)' \
'consolidate:What Karpenter'\''s disruption controller would do to each node (expiration, drift, emptiness, consolidation), and why not for the others; --yes carries out expiration and consolidation' \
'enable-drift:Turn Karpenter'\''s drift feature on in the running controller (v0.21–v0.37)' \
'disable-drift:Turn Karpenter'\''s drift feature off in the running controller (v0.21–v0.37)' \
'version:Print the version' \
'completion:Print a shell completion script (bash, zsh, fish, powershell)' \
'help:Print this message or the help of the given subcommand(s)' \
    )
    _describe -t commands 'kubectl-karpenter help commands' commands "$@"
}
(( $+functions[_kubectl-karpenter__subcmd__help__subcmd__ami_commands] )) ||
_kubectl-karpenter__subcmd__help__subcmd__ami_commands() {
    local commands; commands=()
    _describe -t commands 'kubectl-karpenter help ami commands' commands "$@"
}
(( $+functions[_kubectl-karpenter__subcmd__help__subcmd__completion_commands] )) ||
_kubectl-karpenter__subcmd__help__subcmd__completion_commands() {
    local commands; commands=()
    _describe -t commands 'kubectl-karpenter help completion commands' commands "$@"
}
(( $+functions[_kubectl-karpenter__subcmd__help__subcmd__consolidate_commands] )) ||
_kubectl-karpenter__subcmd__help__subcmd__consolidate_commands() {
    local commands; commands=()
    _describe -t commands 'kubectl-karpenter help consolidate commands' commands "$@"
}
(( $+functions[_kubectl-karpenter__subcmd__help__subcmd__convert_commands] )) ||
_kubectl-karpenter__subcmd__help__subcmd__convert_commands() {
    local commands; commands=()
    _describe -t commands 'kubectl-karpenter help convert commands' commands "$@"
}
(( $+functions[_kubectl-karpenter__subcmd__help__subcmd__disable-drift_commands] )) ||
_kubectl-karpenter__subcmd__help__subcmd__disable-drift_commands() {
    local commands; commands=()
    _describe -t commands 'kubectl-karpenter help disable-drift commands' commands "$@"
}
(( $+functions[_kubectl-karpenter__subcmd__help__subcmd__drift_commands] )) ||
_kubectl-karpenter__subcmd__help__subcmd__drift_commands() {
    local commands; commands=(
'check:Evaluate every managed node and explain why it drifted (exit 1 when any did)' \
'replace:Replace drifted (or named) nodes safely\: replacement first, cordon, drain, terminate' \
    )
    _describe -t commands 'kubectl-karpenter help drift commands' commands "$@"
}
(( $+functions[_kubectl-karpenter__subcmd__help__subcmd__drift__subcmd__check_commands] )) ||
_kubectl-karpenter__subcmd__help__subcmd__drift__subcmd__check_commands() {
    local commands; commands=()
    _describe -t commands 'kubectl-karpenter help drift check commands' commands "$@"
}
(( $+functions[_kubectl-karpenter__subcmd__help__subcmd__drift__subcmd__replace_commands] )) ||
_kubectl-karpenter__subcmd__help__subcmd__drift__subcmd__replace_commands() {
    local commands; commands=()
    _describe -t commands 'kubectl-karpenter help drift replace commands' commands "$@"
}
(( $+functions[_kubectl-karpenter__subcmd__help__subcmd__enable-drift_commands] )) ||
_kubectl-karpenter__subcmd__help__subcmd__enable-drift_commands() {
    local commands; commands=()
    _describe -t commands 'kubectl-karpenter help enable-drift commands' commands "$@"
}
(( $+functions[_kubectl-karpenter__subcmd__help__subcmd__help_commands] )) ||
_kubectl-karpenter__subcmd__help__subcmd__help_commands() {
    local commands; commands=()
    _describe -t commands 'kubectl-karpenter help help commands' commands "$@"
}
(( $+functions[_kubectl-karpenter__subcmd__help__subcmd__nodes_commands] )) ||
_kubectl-karpenter__subcmd__help__subcmd__nodes_commands() {
    local commands; commands=()
    _describe -t commands 'kubectl-karpenter help nodes commands' commands "$@"
}
(( $+functions[_kubectl-karpenter__subcmd__help__subcmd__provision_commands] )) ||
_kubectl-karpenter__subcmd__help__subcmd__provision_commands() {
    local commands; commands=()
    _describe -t commands 'kubectl-karpenter help provision commands' commands "$@"
}
(( $+functions[_kubectl-karpenter__subcmd__help__subcmd__version_commands] )) ||
_kubectl-karpenter__subcmd__help__subcmd__version_commands() {
    local commands; commands=()
    _describe -t commands 'kubectl-karpenter help version commands' commands "$@"
}
(( $+functions[_kubectl-karpenter__subcmd__nodes_commands] )) ||
_kubectl-karpenter__subcmd__nodes_commands() {
    local commands; commands=()
    _describe -t commands 'kubectl-karpenter nodes commands' commands "$@"
}
(( $+functions[_kubectl-karpenter__subcmd__provision_commands] )) ||
_kubectl-karpenter__subcmd__provision_commands() {
    local commands; commands=()
    _describe -t commands 'kubectl-karpenter provision commands' commands "$@"
}
(( $+functions[_kubectl-karpenter__subcmd__version_commands] )) ||
_kubectl-karpenter__subcmd__version_commands() {
    local commands; commands=()
    _describe -t commands 'kubectl-karpenter version commands' commands "$@"
}

if [ "$funcstack[1]" = "_kubectl-karpenter" ]; then
    _kubectl-karpenter "$@"
else
    compdef _kubectl-karpenter kubectl-karpenter
fi
