//! The API server's own rules for the core kinds, through the binary (docs/upstream-tests.md
//! "API validation, defaults and settings left unmirrored, audited (s25-audit-apis)"): what
//! `kubectl apply` refuses of a Job, a PodDisruptionBudget, a pod template's labels,
//! tolerations and spreads is refused by `provision --dry-run` with exit 2 and one line naming
//! the object and the field; the same documents made valid plan. One binary run per scenario,
//! on `tests/fixtures/audit-apis/`.

use crate::support::{fixture, karpenter};

/// `provision --dry-run -f pool.yaml -f -` with `documents` on stdin.
fn provision(documents: &str) -> crate::support::Run {
    let pool = fixture("audit-apis/pool.yaml");
    karpenter(
        &[
            "provision",
            "--dry-run",
            "-f",
            pool.to_str().unwrap(),
            "-f",
            "-",
        ],
        documents.as_bytes(),
    )
}

fn accepted() -> String {
    std::fs::read_to_string(fixture("audit-apis/accepted.yaml")).unwrap()
}

/// The valid documents plan: the Job's pod (with its sidecar) and the Deployment's two pods.
#[test]
fn what_the_api_server_accepts_plans() {
    let run = provision(&accepted());
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout.contains("3 pod(s) placed, 0 unschedulable"),
        "{}",
        run.stdout
    );
}

/// Each edit makes one document one `kubectl apply --dry-run=server` refuses
/// (`k8s.io/kubernetes pkg/apis/batch/validation` `validateJobSpec`,
/// `pkg/apis/policy/validation` `ValidatePodDisruptionBudgetSpec`, `pkg/apis/core/validation`
/// `ValidateTolerations`, `validateMinDomains`, `ValidatePodTemplateSpec` › `ValidateLabels`).
#[test]
fn what_the_api_server_refuses_is_refused_in_one_line() {
    let cases = [
        (
            "a Job without a restart policy (the pod default, Always)",
            "      restartPolicy: OnFailure\n",
            "",
            "Job/migrate: spec.template.spec.restartPolicy: required",
        ),
        (
            "a PDB with both counts",
            "spec: {maxUnavailable: 50%,",
            "spec: {maxUnavailable: 50%, minAvailable: 1,",
            "PodDisruptionBudget/web: spec: minAvailable and maxUnavailable cannot be both set",
        ),
        (
            "tolerationSeconds on a NoSchedule toleration",
            "effect: NoExecute, tolerationSeconds: 30",
            "effect: NoSchedule, tolerationSeconds: 30",
            "Job/migrate: spec.template.spec.tolerations[0].effect: must be NoExecute when tolerationSeconds is set",
        ),
        (
            "minDomains under ScheduleAnyway",
            "whenUnsatisfiable: DoNotSchedule",
            "whenUnsatisfiable: ScheduleAnyway",
            "Deployment/web: spec.template.spec.topologySpreadConstraints[0].minDomains: can only use minDomains if whenUnsatisfiable=DoNotSchedule",
        ),
        (
            "a template label value ending in '-'",
            "tier: front-end}",
            "tier: front-end-}",
            "Deployment/web: spec.template.metadata.labels.tier: invalid label value \"front-end-\"",
        ),
    ];
    for (what, from, to, want) in cases {
        let text = accepted();
        assert!(text.contains(from), "{what}: the fixture lost {from:?}");
        provision(&text.replacen(from, to, 1)).assert_refused_in_one_line(what, want);
    }
}
