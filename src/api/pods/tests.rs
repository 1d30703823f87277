use super::admission::RuntimeClassAdmission;
use super::*;
use crate::model::quantity::{GIB, MIB};
use crate::model::resources::Resources;

fn requests(yaml: &str) -> Result<Resources, InputError> {
    let spec: PodSpec = serde_saphyr::from_str(yaml).unwrap();
    let ctx = Ctx::new(&Location::file("p.yaml"), "Pod/p".into());
    let mut runtime = RuntimeClassAdmissions::new();
    runtime.insert(
        "kata".into(),
        RuntimeClassAdmission {
            overhead: Resources::from_pairs(&[("cpu", "250m"), ("memory", "160Mi")]),
            ..RuntimeClassAdmission::default()
        },
    );
    pod_requests(&ctx, "spec", &spec, &runtime)
}

#[test]
fn app_containers_sum_and_pods_is_one() {
    let r = requests(
        "containers:\n- resources: {requests: {cpu: 1, memory: 1Gi}}\n- resources: {requests: {cpu: 500m}}\n",
    )
    .unwrap();
    assert_eq!((r.cpu, r.memory, r.pods), (1500, GIB, 1000));
    assert_eq!(
        requests("{}").unwrap(),
        Resources::from_pairs(&[("pods", "1")])
    );
}

#[test]
fn an_init_container_bigger_than_the_app_wins() {
    let r = requests(
        "initContainers:\n- resources: {requests: {cpu: 4, memory: 100Mi}}\ncontainers:\n- resources: {requests: {cpu: 1, memory: 1Gi}}\n",
    )
    .unwrap();
    assert_eq!(r.cpu, 4000, "largest init container");
    assert_eq!(r.memory, GIB, "app containers where they are larger");
}

/// A bound pod's requests as Karpenter counts them (`resources.Ceiling`).
fn held_requests(yaml: &str) -> Resources {
    let pod: crate::api::core::Pod = serde_saphyr::from_str(yaml).unwrap();
    convert_pod(
        &pod,
        &Location::file("p.yaml"),
        &RuntimeClassAdmissions::new(),
    )
    .unwrap()
    .requests
    .clone()
}

/// `core v1.14.1: pkg/utils/resources/suite_test.go` › "UseStatusResources" (3 It), and
/// `component-helpers` `determineContainerReqs`'s infeasible branch. **Differed, fixed**
/// (s16): the status was not read, so a pod resized down in place (spec 2 CPU, the kubelet
/// still holding 6) counted as 2 CPU on its node.
#[test]
fn a_running_pod_counts_what_the_kubelet_holds_during_a_resize() {
    let pod = |status: &str| {
        format!(
            "metadata: {{name: p}}\nspec:\n  nodeName: n1\n  containers:\n  - name: app\n    resources: {{requests: {{cpu: '{{cpu}}', memory: '{{mem}}'}}}}\n{status}"
        )
    };
    let with = |spec: (&str, &str), status: &str| {
        held_requests(
            &pod(status)
                .replace("{cpu}", spec.0)
                .replace("{mem}", spec.1),
        )
    };
    let status = |running: (&str, &str), allocated: (&str, &str)| {
        format!(
            "status:\n  containerStatuses:\n  - name: app\n    resources: {{requests: {{cpu: '{}', memory: '{}'}}}}\n    allocatedResources: {{cpu: '{}', memory: '{}'}}\n",
            running.0, running.1, allocated.0, allocated.1
        )
    };
    let r = with(("2", "512Mi"), &status(("2", "512Mi"), ("6", "2Gi")));
    assert_eq!(
        (r.cpu, r.memory),
        (6000, 2 * GIB),
        "should use allocatedResources when higher than spec requests (resize-down in progress)"
    );
    let r = with(("8", "4Gi"), &status(("8", "4Gi"), ("2", "1Gi")));
    assert_eq!(
        (r.cpu, r.memory),
        (8000, 4 * GIB),
        "should use spec requests when higher than allocatedResources (resize-up in progress)"
    );
    let r = with(("4", "2Gi"), "");
    assert_eq!(
        (r.cpu, r.memory),
        (4000, 2 * GIB),
        "should use spec requests when allocatedResources is not set (no resize)"
    );
    // A status without `resources` changes nothing (`cs.Resources != nil`).
    let r = with(
        ("4", "2Gi"),
        "status:\n  containerStatuses:\n  - name: app\n    allocatedResources: {cpu: '6'}\n",
    );
    assert_eq!(r.cpu, 4000);
    // An infeasible resize: the spec is not what will run, the status alone counts.
    let infeasible = format!(
        "{}  conditions:\n  - {{type: PodResizePending, status: 'True', reason: Infeasible}}\n",
        status(("2", "512Mi"), ("2", "512Mi"))
    );
    let r = with(("8", "4Gi"), &infeasible);
    assert_eq!((r.cpu, r.memory), (2000, 512 * MIB));
}

/// `core v1.14.1: pkg/utils/resources/suite_test.go` › "Resource Calculations" (sidecars,
/// init containers, overhead; KEP-753), a row per `It` with its containers, init containers
/// (`s` = a sidecar), overhead and the expected CPU — agree.
/// Upstream It: "should calculate resource requests based off of the sum of containers and sidecarContainers".
/// Upstream It: "should calculate resource requests based off of containers, sidecarContainers, initContainers, and overhead".
/// Upstream It: "should calculate resource requests when there is an initContainer after a sidecarContainer that exceeds container resource requests".
/// Upstream It: "should calculate resource requests when there is an initContainer after a sidecarContainer that doesn't exceed container resource requests".
/// Upstream It: "should calculate resource requests when there is an initContainer after multiple sidecarContainers that exceeds container resource requests".
/// Upstream It: "should calculate resource requests when there is an initContainer after multiple sidecarContainers that doesn't exceed container resource requests".
/// Upstream It: "should calculate resource requests with multiple sidecarContainers when the first initContainer exceeds the sum of all sidecarContainers and container resource requests".
/// Upstream It: "should calculate resource requests with multiple interspersed sidecarContainers and initContainers".
#[test]
fn resource_calculations_as_upstream() {
    // (It, app containers' CPU, init containers (sidecar?, CPU), overhead, expected CPU)
    type Case<'a> = (&'a str, &'a [i64], &'a [(bool, i64)], i64, i64);
    let cases: [Case; 8] = [
        ("the sum of containers and sidecarContainers", &[2], &[(true, 1)], 0, 3),
        ("containers, sidecarContainers, initContainers, and overhead", &[2], &[(false, 4), (true, 3)], 5, 10),
        ("an initContainer after a sidecarContainer that exceeds container resource requests", &[2], &[(true, 4), (false, 10)], 0, 14),
        ("an initContainer after a sidecarContainer that doesn't exceed container resource requests", &[2], &[(true, 4), (false, 1)], 0, 6),
        ("an initContainer after multiple sidecarContainers that exceeds container resource requests", &[3], &[(true, 2), (true, 1), (true, 3), (true, 5), (false, 20)], 0, 31),
        ("an initContainer after multiple sidecarContainers that doesn't exceed container resource requests", &[3], &[(true, 2), (true, 1), (true, 3), (true, 5), (false, 1)], 0, 14),
        ("multiple sidecarContainers when the first initContainer exceeds the sum of all", &[3], &[(false, 25), (true, 1), (false, 3), (false, 1), (true, 5), (false, 1), (false, 1), (true, 1)], 0, 25),
        ("multiple interspersed sidecarContainers and initContainers", &[3], &[(false, 2), (true, 1), (false, 3), (false, 1), (true, 5), (false, 1), (false, 1), (true, 1), (false, 2)], 0, 10),
    ];
    for (it, containers, inits, overhead, want) in cases {
        let mut yaml = String::new();
        if overhead > 0 {
            yaml.push_str(&format!("overhead: {{cpu: '{overhead}'}}\n"));
        }
        yaml.push_str("initContainers:\n");
        for (sidecar, cpu) in inits {
            let policy = if *sidecar {
                "restartPolicy: Always\n  "
            } else {
                ""
            };
            yaml.push_str(&format!(
                "- {policy}resources: {{requests: {{cpu: '{cpu}'}}}}\n"
            ));
        }
        yaml.push_str("containers:\n");
        for cpu in containers {
            yaml.push_str(&format!("- resources: {{requests: {{cpu: '{cpu}'}}}}\n"));
        }
        assert_eq!(requests(&yaml).unwrap().cpu, want * 1000, "{it}");
    }
}

#[test]
fn sidecars_add_to_the_app_and_to_later_init_containers() {
    // sidecar 1 CPU, then a 2-CPU init container: during init 1+2 = 3; app 1 + sidecar 1 = 2.
    let r = requests(
        "initContainers:\n- restartPolicy: Always\n  resources: {requests: {cpu: 1}}\n- resources: {requests: {cpu: 2}}\ncontainers:\n- resources: {requests: {cpu: 1}}\n",
    )
    .unwrap();
    assert_eq!(r.cpu, 3000);
    // An init container before the sidecar does not see it: max(2, 1+1) = 2.
    let r = requests(
        "initContainers:\n- resources: {requests: {cpu: 2}}\n- restartPolicy: Always\n  resources: {requests: {cpu: 1}}\ncontainers:\n- resources: {requests: {cpu: 1}}\n",
    )
    .unwrap();
    assert_eq!(r.cpu, 2000);
    // Sidecars only: app 1 + sidecars 1.5 = 2.5.
    let r = requests(
        "initContainers:\n- restartPolicy: Always\n  resources: {requests: {cpu: 500m}}\n- restartPolicy: Always\n  resources: {requests: {cpu: 1}}\ncontainers:\n- resources: {requests: {cpu: 1}}\n",
    )
    .unwrap();
    assert_eq!(r.cpu, 2500);
}

#[test]
fn overhead_limits_and_pod_level_resources() {
    let r = requests("overhead: {cpu: 100m}\ncontainers:\n- resources: {requests: {cpu: 1}}\n")
        .unwrap();
    assert_eq!(r.cpu, 1100);
    let r = requests("runtimeClassName: kata\ncontainers:\n- resources: {requests: {cpu: 1}}\n")
        .unwrap();
    assert_eq!(
        (r.cpu, r.memory),
        (1250, 160 * MIB),
        "RuntimeClass overhead when spec.overhead is absent"
    );
    let r = requests(
        "containers:\n- resources: {limits: {cpu: 2, nvidia.com/gpu: 1}, requests: {cpu: 1}}\n",
    )
    .unwrap();
    assert_eq!(
        (r.cpu, r.get("nvidia.com/gpu")),
        (1000, 1000),
        "limits only fill missing requests"
    );
    let r = requests("resources: {requests: {cpu: 3}}\ncontainers:\n- resources: {requests: {cpu: 1, memory: 1Gi}}\n").unwrap();
    assert_eq!(
        (r.cpu, r.memory),
        (3000, GIB),
        "pod-level requests override the aggregate per resource"
    );
    let e = requests("containers:\n- resources: {requests: {cpu: lots}}\n")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("spec.containers[0].resources.requests.cpu: invalid quantity \"lots\""),
        "{e}"
    );
    let e = requests("containers:\n- resources: {limits: {nvidia.com/gpu: x}}\n")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("spec.containers[0].resources.limits[nvidia.com/gpu]"),
        "{e}"
    );
    let e = requests("containers:\n- resources: {requests: {cpu: -1}}\n")
        .unwrap_err()
        .to_string();
    assert!(e.contains("must not be negative"), "{e}");
}

/// Pod-level limits without pod-level requests: the API server defaults the requests before
/// Karpenter reads the pod (`k8s.io/kubernetes pkg/apis/core/v1/defaults.go`
/// `defaultPodRequests`), to the containers' aggregate for cpu and memory where containers
/// request them, else to the limit; `PodRequests` (`component-helpers resource/helpers.go`,
/// called by `core v1.14.1 pkg/utils/resources/resources.go` `Ceiling`) reads cpu, memory and
/// hugepages only. **Differed, fixed** — scenario: limits of 4 CPUs / 8Gi over a container
/// requesting 1 CPU / 2Gi → Karpenter plans for 1 CPU / 2Gi (an `m5.large`); we took the
/// limits as requests (an `m5.2xlarge`).
#[test]
fn pod_level_limits_default_requests_as_the_api_server_does() {
    // (pod spec, (cpu, memory, ephemeral-storage) requested, why)
    let cases = [
        (
            "resources: {limits: {cpu: 4, memory: 8Gi}}\ncontainers:\n- resources: {requests: {cpu: 1, memory: 2Gi}}\n",
            (1000, 2 * GIB, 0),
            "the containers' aggregate",
        ),
        (
            "resources: {limits: {cpu: 4, memory: 8Gi}}\ncontainers:\n- resources: {requests: {cpu: 1}}\n- resources: {limits: {cpu: 500m}}\n",
            (1500, 8 * GIB, 0),
            "cpu from the containers (a limit stands for a request), memory from the pod's limit",
        ),
        (
            "resources: {requests: {cpu: 3}, limits: {cpu: 4}}\ncontainers:\n- resources: {requests: {cpu: 1}}\n",
            (3000, 0, 0),
            "a pod-level request is read as written",
        ),
        (
            "resources: {limits: {cpu: 2, ephemeral-storage: 9Gi}}\ncontainers:\n- resources: {requests: {ephemeral-storage: 1Gi}}\n",
            (2000, 0, GIB),
            "no container asks for cpu: the limit; ephemeral-storage is not a pod-level resource",
        ),
    ];
    for (spec, want, why) in cases {
        let r = requests(spec).unwrap();
        assert_eq!((r.cpu, r.memory, r.ephemeral_storage), want, "{why}");
    }
}

/// `core v1.14.1: pkg/controllers/state/suite_test.go` "DaemonSet Controller": the newest
/// pod a DaemonSet controls stands for it ("should update daemonsetCache with the newest
/// created pod"), the template where it has none ("should not update daemonsetCache when
/// daemonset pod is not present"); a pod of another DaemonSet, or of the same name in
/// another namespace, is not its ("should only return daemonset pods from the daemonset
/// cache"). **Differs, fixed** — scenario: a DaemonSet whose template requests nothing, its
/// pods admitted with a LimitRange's default `cpu: 100m` → upstream counts 100m of overhead
/// per node; we counted the template's nothing.
#[test]
fn a_daemonset_is_its_newest_pod() {
    use crate::model::pod::Owner;
    use crate::model::taints::{Effect, Toleration};
    let owned = |ns: &str, ds: &str, cpu: &str, created: &str| {
        let mut p = Pod::default();
        p.namespace = ns.into();
        p.owner = Some(Owner::of("DaemonSet", ds));
        p.creation_timestamp = Some(created.into());
        p.requests = Resources::from_pairs(&[("cpu", cpu), ("pods", "1")]);
        p
    };
    let mut templates = vec![
        owned("kube-system", "logs", "0", "2024-01-01T00:00:00Z"),
        owned("kube-system", "absent", "250m", "2024-01-01T00:00:00Z"),
    ];
    let mut newest = owned("kube-system", "logs", "100m", "2024-06-02T00:00:00Z");
    newest.tolerations = vec![Toleration::exists(
        "node.kubernetes.io/unschedulable",
        Some(Effect::NoSchedule),
    )];
    let pods = vec![
        owned("kube-system", "logs", "50m", "2024-06-01T00:00:00Z"),
        newest.clone(),
        owned("kube-system", "logs", "70m", "2024-05-01T00:00:00Z"),
        owned("other", "logs", "900m", "2024-07-01T00:00:00Z"),
        owned("kube-system", "absentee", "900m", "2024-07-01T00:00:00Z"),
    ];
    daemonsets_as_their_newest_pods(&mut templates, &pods);
    assert_eq!(templates[0].requests.get("cpu"), 100);
    assert_eq!(templates[0].tolerations, newest.tolerations);
    assert_eq!(templates[1].requests.get("cpu"), 250);
}

/// `state/cluster.go` `UpdateDaemonSet` takes the newest pod the DaemonSet controls, bound
/// or not. **Differs, fixed** — scenario (provisioning suite › Daemonsets "should remove
/// daemonset node hostname affinity when considering daemonset schedulability"): a
/// DaemonSet requesting 4 CPU whose only pod, not bound yet (pinned to its node by name),
/// requests 2 CPU → upstream counts 2 CPU of overhead; we read the template's 4 because
/// unbound DaemonSet pods were dropped before the stand-in was chosen.
#[test]
fn an_unbound_daemonset_pod_stands_for_its_daemonset() {
    let text = "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: ds, namespace: default}\n\
        spec:\n  selector: {matchLabels: {a: b}}\n  template:\n    metadata: {labels: {a: b}}\n    \
        spec: {containers: [{name: c, image: i, resources: {requests: {cpu: \"4\"}}}]}\n\
        ---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: ds-x\n  namespace: default\n  \
        ownerReferences: [{apiVersion: apps/v1, kind: DaemonSet, name: ds, uid: u, controller: true}]\n\
        spec: {containers: [{name: c, image: i, resources: {requests: {cpu: \"2\"}}}]}\n";
    let m = crate::api::load_str("in.yaml", text).unwrap();
    assert!(m.pods.is_empty(), "a DaemonSet pod is never planned");
    assert_eq!(m.daemonsets[0].requests.get("cpu"), 2000);
}

#[test]
fn synthetic_uids_are_stable_and_distinct() {
    assert_eq!(synthetic_uid("a"), synthetic_uid("a"));
    assert_ne!(
        synthetic_uid("Deployment/default/x/1"),
        synthetic_uid("Deployment/default/x/2")
    );
    assert_eq!(synthetic_uid("a").len(), 36);
}

/// `core v1.14.1: pkg/scheduling/hostportusage.go GetHostPorts` ranges over the app containers
/// only: a sidecar's host port (still checked like the API server checks it) takes no port on
/// the node. **Differed, fixed (s29, lead)**: we counted sidecars' host ports, so two pods with
/// one on the same port needed two nodes where Karpenter plans one.
#[test]
fn a_sidecars_host_port_is_checked_but_takes_no_port() {
    let ports = |yaml: &str| {
        let spec: PodSpec = serde_saphyr::from_str(yaml).unwrap();
        let ctx = Ctx::new(&Location::file("p.yaml"), "Pod/p".into());
        host_ports(&ctx, "spec", &spec).map(|p| p.len())
    };
    let sidecar = "initContainers:\n- name: proxy\n  restartPolicy: Always\n  ports: [{containerPort: 15001, hostPort: PORT}]\ncontainers:\n- name: app\n  ports: [{containerPort: 80, hostPort: 8080}]\n";
    assert_eq!(
        ports(&sidecar.replace("PORT", "15001")),
        Ok(1),
        "the app's only"
    );
    let bad = ports(&sidecar.replace("PORT", "70000"))
        .unwrap_err()
        .to_string();
    assert!(
        bad.contains("initContainers[0].ports[0].hostPort: must be between 1 and 65535"),
        "{bad}"
    );
}
