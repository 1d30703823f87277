//! The v1.14.1 CRDs read rule by rule (docs/upstream-tests.md "CRD schemas and CEL rules, line
//! by line (s29-linecrd)"): the rules no upstream test exercises, each broken by one patch on a
//! valid object. Sources: core v1.14.1 `pkg/apis/crds/karpenter.sh_{nodepools,nodeclaims,
//! nodeoverlays}.yaml`, `pkg/apis/v1/nodepool_validation.go` / `nodeclaim_validation.go`
//! (`RuntimeValidate`), aws v1.14.1 `pkg/apis/crds/karpenter.k8s.aws_ec2nodeclasses.yaml`.

use super::{check, Accepted, Refused};

const POOL: &str = "apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: p}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: c}
      requirements: [{key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}]
";

const CLAIM: &str = "apiVersion: karpenter.sh/v1
kind: NodeClaim
metadata: {name: c}
spec:
  nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: c}
  requirements: [{key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}]
";

const OVERLAY: &str = "apiVersion: karpenter.sh/v1alpha1
kind: NodeOverlay
metadata: {name: o}
spec:
  requirements: [{key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}]
";

const CLASS: &str = "apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: c}
spec:
  role: r
  amiSelectorTerms: [{alias: al2023@latest}]
  subnetSelectorTerms: [{tags: {k: v}}]
  securityGroupSelectorTerms: [{tags: {k: v}}]
";

/// The domain rule is CEL's `!x.find("^([^/]+)").endsWith("karpenter.sh")` (the same for
/// `karpenter.k8s.aws`), a plain suffix of the text before the first `/`, on a NodePool's
/// labels and requirement keys and on NodeClaim and NodeOverlay requirement keys: the API
/// server refuses `mykarpenter.sh/team` and a bare `karpenter.sh`, which `IsRestrictedLabel`
/// (the domain or a `.`-subdomain) lets through.
#[test]
fn a_domain_ending_in_a_karpenter_domain_is_refused_as_the_cel_rule_refuses_it() {
    let labels =
        |k: &str| format!("{{spec: {{template: {{metadata: {{labels: {{'{k}': x}}}}}}}}}}");
    let pool_req = |k: &str| {
        format!("{{spec: {{template: {{spec: {{requirements: [{{key: '{k}', operator: Exists}}]}}}}}}}}")
    };
    let req = |k: &str| format!("{{spec: {{requirements: [{{key: '{k}', operator: Exists}}]}}}}");
    let refused = [
        "mykarpenter.sh/team",
        "karpenter.sh",
        "xkarpenter.k8s.aws/a",
        "team.karpenter.sh",
    ];
    let accepted = [
        "karpenter.sh.example.com/team",
        "example.com/karpenter.sh",
        "team",
    ];
    let mut pool = Vec::new();
    let (mut claim, mut overlay) = (Vec::new(), Vec::new());
    for k in refused {
        pool.push((k, labels(k), Refused("spec.template.metadata.labels")));
        pool.push((
            k,
            pool_req(k),
            Refused("spec.template.spec.requirements[0].key"),
        ));
        claim.push((k, req(k), Refused("spec.requirements[0].key")));
        overlay.push((k, req(k), Refused("spec.requirements[0].key")));
    }
    for k in accepted {
        pool.push((k, labels(k), Accepted));
        pool.push((k, pool_req(k), Accepted));
        claim.push((k, req(k), Accepted));
        overlay.push((k, req(k), Accepted));
    }
    let cases = |v: &[(&'static str, String, super::Want)]| -> Vec<(String, String, super::Want)> {
        v.iter()
            .map(|(k, p, w)| ((*k).to_string(), p.clone(), *w))
            .collect()
    };
    for (base, v) in [(POOL, &pool), (CLAIM, &claim), (OVERLAY, &overlay)] {
        check(base, &super::borrowed(&cases(v)));
    }
}

/// `Exists` and `DoesNotExist` with values: no CRD rule and no `ValidateRequirement` check
/// refuses them (the values are ignored); Kubernetes refuses them on its own kinds.
#[test]
fn exists_with_values_is_accepted_where_karpenter_accepts_it() {
    let pool =
        "{spec: {template: {spec: {requirements: [{key: team, operator: Exists, values: [a]}]}}}}";
    check(POOL, &[("NodePool Exists", pool, Accepted)]);
    let dne = "{spec: {requirements: [{key: team, operator: DoesNotExist, values: [a]}]}}";
    check(CLAIM, &[("NodeClaim DoesNotExist", dne, Accepted)]);
    check(OVERLAY, &[("NodeOverlay DoesNotExist", dne, Accepted)]);
    let pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c, image: i}]\n  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: team, operator: Exists}]}]}}}\n";
    let with_values = "{spec: {affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: team, operator: Exists, values: [a]}]}]}}}}}";
    check(
        pod,
        &[(
            "Pod Exists",
            with_values,
            Refused("spec.affinity.nodeAffinity"),
        )],
    );
}

/// `validateTaints` (`RuntimeValidate`): one key/effect set over `taints` and `startupTaints`;
/// the CRDs' `format: date-time` on `timeAdded`; the v1 CRD's `reasons` is a list-type set.
#[test]
fn a_pools_repeated_taints_and_reasons_and_a_malformed_time_are_refused() {
    let taints = |t: &str, s: &str| {
        format!("{{spec: {{template: {{spec: {{taints: {t}, startupTaints: {s}}}}}}}}}")
    };
    let a = "[{key: a, effect: NoSchedule}]";
    let ab = "[{key: a, effect: NoSchedule}, {key: a, value: b, effect: NoSchedule}]";
    let exec = "[{key: a, effect: NoExecute}]";
    let time = |t: &str| {
        format!("{{spec: {{taints: [{{key: a, effect: NoSchedule, timeAdded: '{t}'}}]}}}}")
    };
    let reasons = |r: &str| {
        format!("{{spec: {{disruption: {{consolidateAfter: 0s, budgets: [{{nodes: '1', reasons: {r}}}]}}}}}}")
    };
    check(
        POOL,
        &super::borrowed(&[
            (
                "twice in taints".into(),
                taints(ab, "[]"),
                Refused("spec.template.spec.taints[1]"),
            ),
            (
                "in taints and startupTaints".into(),
                taints(a, a),
                Refused("spec.template.spec.startupTaints[0]"),
            ),
            ("other effect".into(), taints(a, exec), Accepted),
            (
                "reasons twice".into(),
                reasons("[Empty, Empty]"),
                Refused("spec.disruption.budgets[0].reasons[1]"),
            ),
            ("reasons once".into(), reasons("[Empty, Drifted]"), Accepted),
        ]),
    );
    check(
        CLAIM,
        &super::borrowed(&[
            ("RFC 3339".into(), time("2024-01-01T00:00:00Z"), Accepted),
            (
                "not a time".into(),
                time("yesterday"),
                Refused("spec.taints[0].timeAdded"),
            ),
        ]),
    );
}

/// A NodeClaim's and NodeOverlay's `requirements` are required; a NodeClaim's `nodeClassRef`
/// too, its `group`, `kind` and `name` not empty (CEL `self != ''`); its `resources.requests`
/// quantities (the CRD's pattern).
#[test]
fn a_claims_required_fields_and_requests_follow_its_crd() {
    check(
        CLAIM,
        &[
            (
                "no requirements",
                "{spec: {requirements: null}}",
                Refused("spec.requirements"),
            ),
            ("empty requirements", "{spec: {requirements: []}}", Accepted),
            (
                "no nodeClassRef",
                "{spec: {nodeClassRef: null}}",
                Refused("spec.nodeClassRef"),
            ),
            (
                "empty group",
                "{spec: {nodeClassRef: {group: ''}}}",
                Refused("spec.nodeClassRef.group"),
            ),
            (
                "no kind",
                "{spec: {nodeClassRef: {kind: null}}}",
                Refused("spec.nodeClassRef.kind"),
            ),
            (
                "bad request",
                "{spec: {resources: {requests: {cpu: '1 k'}}}}",
                Refused("spec.resources.requests.cpu"),
            ),
            (
                "request",
                "{spec: {resources: {requests: {cpu: '1', memory: 1Gi}}}}",
                Accepted,
            ),
        ],
    );
    check(
        OVERLAY,
        &[(
            "no requirements",
            "{spec: {requirements: null}}",
            Refused("spec.requirements"),
        )],
    );
}

/// `ipPrefixCount`'s `minimum: 0`; an alias's `maxLength: 30`.
#[test]
fn a_node_classs_prefix_count_and_alias_length_follow_the_crd() {
    check(
        CLASS,
        &[
            (
                "negative",
                "{spec: {ipPrefixCount: -1}}",
                Refused("spec.ipPrefixCount"),
            ),
            (
                "not a number",
                "{spec: {ipPrefixCount: 'a'}}",
                Refused("spec.ipPrefixCount"),
            ),
            ("zero", "{spec: {ipPrefixCount: 0}}", Accepted),
            (
                "31 characters",
                "{spec: {amiSelectorTerms: [{alias: al2023@v20240101000000000000000}]}}",
                Refused("spec.amiSelectorTerms[0].alias"),
            ),
            (
                "30 characters",
                "{spec: {amiSelectorTerms: [{alias: al2023@v2024010100000000000000}]}}",
                Accepted,
            ),
        ],
    );
}
