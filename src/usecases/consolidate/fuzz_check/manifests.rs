//! A [`Spec`] as the objects of a `consolidate -f` input, in each API generation's shape.

use serde_json::{json, Value};

use super::gen::{time, Gen, Owner, PodSpec, Policy, Pool, Spec, NOW, WINDOWS};

const TAINT: &str = "dedicated";

/// The label naming a node's pool in this generation.
pub fn pool_label(gen: Gen) -> &'static str {
    match gen {
        Gen::V1Alpha5 => "karpenter.sh/provisioner-name",
        Gen::V1 | Gen::V1Beta1 => "karpenter.sh/nodepool",
    }
}

/// The pod annotation that keeps a pod (hence its node) from being disrupted.
pub fn pod_annotation(gen: Gen) -> &'static str {
    match gen {
        Gen::V1Alpha5 => "karpenter.sh/do-not-evict",
        Gen::V1 | Gen::V1Beta1 => "karpenter.sh/do-not-disrupt",
    }
}

fn secs(s: Option<i64>) -> Value {
    s.map_or(json!("Never"), |s| json!(format!("{s}s")))
}

fn requirements(p: &Pool) -> Value {
    let mut reqs = vec![
        json!({"key": "karpenter.sh/capacity-type", "operator": "In", "values": p.capacity_types}),
        json!({"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]}),
    ];
    if p.types.is_empty() {
        reqs.push(json!({"key": "karpenter.k8s.aws/instance-category", "operator": "In", "values": ["c", "m", "r"]}));
        reqs.push(json!({"key": "karpenter.k8s.aws/instance-size", "operator": "In", "values": ["large", "xlarge", "2xlarge"]}));
    } else {
        reqs.push(
            json!({"key": "node.kubernetes.io/instance-type", "operator": "In", "values": p.types}),
        );
    }
    if let Some((key, min)) = p.min_values {
        match reqs.iter_mut().find(|r| r["key"] == key.label()) {
            Some(r) => r["minValues"] = json!(min),
            None => reqs.push(json!({"key": key.label(), "operator": "Exists", "minValues": min})),
        }
    }
    json!(reqs)
}

fn taints(p: &Pool) -> Value {
    if p.tainted {
        json!([{"key": TAINT, "value": "x", "effect": "NoSchedule"}])
    } else {
        json!([])
    }
}

fn budgets(p: &Pool) -> Value {
    let list: Vec<Value> = p
        .budgets
        .iter()
        .map(|b| {
            let mut v = json!({"nodes": if b.percent { format!("{}%", b.value) } else { b.value.to_string() }});
            if !b.reasons.is_empty() {
                v["reasons"] = json!(b.reasons);
            }
            if let Some(w) = b.window {
                v["schedule"] = json!(WINDOWS[w].0);
                v["duration"] = json!(WINDOWS[w].1);
            }
            v
        })
        .collect();
    json!(list)
}

fn pool_object(gen: Gen, p: &Pool) -> Value {
    match gen {
        Gen::V1 => {
            json!({"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": p.name},
            "spec": {"disruption": {
                        "consolidationPolicy": match p.policy { Policy::WhenEmpty => "WhenEmpty",
                            Policy::Underutilized => "WhenEmptyOrUnderutilized", Policy::Balanced => "Balanced" },
                        "consolidateAfter": secs(p.consolidate_after), "budgets": budgets(p)},
                     "template": {"spec": {"expireAfter": secs(p.expire_after),
                        "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
                        "requirements": requirements(p), "taints": taints(p)}}}})
        }
        Gen::V1Beta1 => {
            let mut disruption = json!({"consolidationPolicy": if p.policy == Policy::WhenEmpty { "WhenEmpty" } else { "WhenUnderutilized" },
                "expireAfter": secs(p.expire_after), "budgets": budgets(p)});
            if p.policy == Policy::WhenEmpty {
                disruption["consolidateAfter"] = secs(p.consolidate_after);
            }
            json!({"apiVersion": "karpenter.sh/v1beta1", "kind": "NodePool", "metadata": {"name": p.name},
                "spec": {"disruption": disruption, "template": {"spec": {
                    "nodeClassRef": {"apiVersion": "karpenter.k8s.aws/v1beta1", "kind": "EC2NodeClass", "name": "default"},
                    "requirements": requirements(p), "taints": taints(p)}}}})
        }
        Gen::V1Alpha5 => {
            let mut spec = json!({"providerRef": {"name": "default"}, "requirements": requirements(p), "taints": taints(p)});
            if p.policy == Policy::WhenEmpty || p.consolidate_after.is_none() {
                spec["ttlSecondsAfterEmpty"] = json!(p.consolidate_after.unwrap_or(30));
            } else {
                spec["consolidation"] = json!({"enabled": true});
            }
            if let Some(e) = p.expire_after {
                spec["ttlSecondsUntilExpired"] = json!(e);
            }
            json!({"apiVersion": "karpenter.sh/v1alpha5", "kind": "Provisioner", "metadata": {"name": p.name}, "spec": spec})
        }
    }
}

fn node_class(s: &Spec) -> Value {
    match s.gen {
        Gen::V1 => {
            let mut class = json!({"apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass", "metadata": {"name": "default"},
            "spec": {"role": "KarpenterNodeRole", "amiSelectorTerms": [{"alias": "al2023@latest"}],
                     "subnetSelectorTerms": [{"id": "subnet-a"}], "securityGroupSelectorTerms": [{"id": "sg-a"}]}});
            let terms: Vec<Value> = s
                .reservations
                .iter()
                .filter(|r| r.selected)
                .map(|r| json!({"id": r.id}))
                .collect();
            if !terms.is_empty() {
                class["spec"]["capacityReservationSelectorTerms"] = json!(terms);
            }
            class
        }
        Gen::V1Beta1 => {
            json!({"apiVersion": "karpenter.k8s.aws/v1beta1", "kind": "EC2NodeClass", "metadata": {"name": "default"},
            "spec": {"amiFamily": "AL2", "role": "KarpenterNodeRole",
                     "subnetSelectorTerms": [{"id": "subnet-a"}], "securityGroupSelectorTerms": [{"id": "sg-a"}]}})
        }
        Gen::V1Alpha5 => {
            json!({"apiVersion": "karpenter.k8s.aws/v1alpha1", "kind": "AWSNodeTemplate", "metadata": {"name": "default"},
            "spec": {"subnetSelector": {"karpenter.sh/discovery": "c"}, "securityGroupSelector": {"karpenter.sh/discovery": "c"}}})
        }
    }
}

fn pod_object(gen: Gen, p: &PodSpec, node: &str, created: i64) -> Value {
    let mut o = json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": p.name, "namespace": "default", "labels": {"app": p.app},
                     "creationTimestamp": time(created)},
        "spec": {"nodeName": node, "containers": [{"name": "c", "image": "nginx",
                 "resources": {"requests": {"cpu": format!("{}m", p.cpu_m), "memory": format!("{}Mi", p.mem_mi)}}}]},
        "status": {"phase": "Running", "conditions": [{"type": "PodScheduled", "status": "True"},
                                                      {"type": "Ready", "status": "True"}]}});
    let owner = match p.owner {
        Owner::None => None,
        Owner::ReplicaSet => Some(("apps/v1", "ReplicaSet", format!("{}-rs", p.app))),
        Owner::StatefulSet => Some(("apps/v1", "StatefulSet", format!("{}-sts", p.app))),
        Owner::DaemonSet => Some(("apps/v1", "DaemonSet", "ds".to_string())),
    };
    if let Some((api, kind, name)) = owner {
        o["metadata"]["ownerReferences"] = json!([{"apiVersion": api, "kind": kind, "name": name,
            "uid": format!("uid-{name}"), "controller": true}]);
    }
    if p.do_not_disrupt {
        o["metadata"]["annotations"] = json!({pod_annotation(gen): "true"});
    }
    let spec = &mut o["spec"];
    if p.owner == Owner::DaemonSet || p.tolerates {
        spec["tolerations"] = json!([{"operator": "Exists"}]);
    }
    if let Some(z) = p.zone_selector {
        spec["nodeSelector"] = json!({"topology.kubernetes.io/zone": z});
    }
    if p.high_priority {
        spec["priorityClassName"] = json!("high");
        spec["priority"] = json!(1000);
    }
    if p.spread {
        spec["topologySpreadConstraints"] = json!([{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
            "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {"matchLabels": {"app": p.app}}}]);
    }
    if p.anti_affinity {
        spec["affinity"] = json!({"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": {"app": p.app}}}]}});
    }
    o
}

/// Every object of the cluster, in a fixed order.
pub fn objects(s: &Spec) -> Vec<Value> {
    let gen = s.gen;
    let mut out: Vec<Value> = s.pools.iter().map(|p| pool_object(gen, p)).collect();
    out.push(node_class(s));
    out.push(
        json!({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                    "metadata": {"name": "high"}, "value": 1000}),
    );
    for (i, pdb) in s.pdbs.iter().enumerate() {
        let value = if pdb.percent {
            json!(format!("{}%", pdb.value))
        } else {
            json!(pdb.value)
        };
        let key = if pdb.min_available {
            "minAvailable"
        } else {
            "maxUnavailable"
        };
        out.push(
            json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": format!("pdb-{i}"), "namespace": "default"},
            "spec": {key: value, "selector": {"matchLabels": {"app": pdb.app}}}}),
        );
    }
    for n in &s.nodes {
        let pool = &s.pools[n.pool];
        let created = NOW - n.age;
        let (cpu, mem) = n.allocatable();
        let pid = format!("aws:///{}/i-{}", n.zone, n.name);
        let mut labels = json!({pool_label(gen): pool.name, "karpenter.sh/registered": "true",
            "node.kubernetes.io/instance-type": n.itype, "topology.kubernetes.io/zone": n.zone,
            "karpenter.sh/capacity-type": n.capacity_type, "kubernetes.io/arch": "amd64",
            "kubernetes.io/os": "linux", "kubernetes.io/hostname": n.name});
        if n.initialized {
            labels["karpenter.sh/initialized"] = json!("true");
        }
        if let Some(id) = &n.reservation {
            labels["karpenter.k8s.aws/capacity-reservation-id"] = json!(id);
        }
        let mut node = json!({"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": n.name, "creationTimestamp": time(created), "labels": labels},
            "spec": {"providerID": pid, "taints": taints(pool)},
            "status": {"conditions": [{"type": "Ready", "status": if n.ready { "True" } else { "False" }}],
                       "capacity": {"cpu": format!("{}m", cpu + 80), "memory": format!("{}Mi", mem + 300), "pods": "58"},
                       "allocatable": {"cpu": format!("{cpu}m"), "memory": format!("{mem}Mi"), "pods": "58"}}});
        if n.do_not_disrupt {
            let key = match gen {
                Gen::V1Alpha5 => "karpenter.sh/do-not-consolidate",
                Gen::V1 | Gen::V1Beta1 => "karpenter.sh/do-not-disrupt",
            };
            node["metadata"]["annotations"] = json!({key: "true"});
        }
        out.push(node);
        out.push(claim(s, n, created, &pid));
        for p in &n.pods {
            out.push(pod_object(gen, p, &n.name, created + 120));
        }
    }
    out
}

fn claim(s: &Spec, n: &super::gen::NodeSpec, created: i64, pid: &str) -> Value {
    let pool = &s.pools[n.pool];
    let mut conditions = Vec::new();
    let init = match s.gen {
        Gen::V1Alpha5 => "MachineInitialized",
        Gen::V1 | Gen::V1Beta1 => "Initialized",
    };
    if n.initialized {
        conditions
            .push(json!({"type": init, "status": "True", "lastTransitionTime": time(n.init_at())}));
    }
    if n.drifted {
        conditions.push(
            json!({"type": "Drifted", "status": "True", "reason": "AMIDrift",
                               "lastTransitionTime": time(NOW - 60)}),
        );
    }
    let labels = json!({pool_label(s.gen): pool.name});
    let mut status = json!({"nodeName": n.name, "providerID": pid, "conditions": conditions});
    match s.gen {
        Gen::V1 => {
            if let Some(age) = n.last_pod_event_age {
                status["lastPodEventTime"] = json!(time(NOW - age));
            }
            json!({"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
                "metadata": {"name": format!("{}-claim", n.name), "creationTimestamp": time(created), "labels": labels},
                "spec": {"nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
                         "requirements": [], "expireAfter": secs(pool.expire_after)},
                "status": status})
        }
        Gen::V1Beta1 => json!({"apiVersion": "karpenter.sh/v1beta1", "kind": "NodeClaim",
            "metadata": {"name": format!("{}-claim", n.name), "creationTimestamp": time(created), "labels": labels},
            "spec": {"nodeClassRef": {"name": "default"}, "requirements": []}, "status": status}),
        Gen::V1Alpha5 => json!({"apiVersion": "karpenter.sh/v1alpha5", "kind": "Machine",
            "metadata": {"name": format!("{}-claim", n.name), "creationTimestamp": time(created), "labels": labels},
            "spec": {"machineTemplateRef": {"name": "default"}, "requirements": []}, "status": status}),
    }
}

/// The `--catalog` document.
pub fn catalog(s: &Spec) -> String {
    let types: Vec<Value> = s
        .catalog
        .iter()
        .map(|(name, cpu, gib, offerings)| {
            let reserved = s.reservations.iter().filter(|r| r.itype == *name).map(
                |r| json!({"zone": r.zone, "capacityType": "reserved", "reservationId": r.id, "count": r.count}),
            );
            let offerings: Vec<Value> = offerings
                .iter()
                .map(|(zone, ct, price, available)| {
                    json!({"zone": zone, "capacityType": ct, "price": price, "available": available})
                })
                .chain(reserved)
                .collect();
            json!({"name": name, "capacity": {"cpu": cpu.to_string(), "memory": format!("{gib}Gi"), "pods": "58"},
                   "labels": {"kubernetes.io/arch": "amd64", "kubernetes.io/os": "linux"},
                   "offerings": offerings})
        })
        .collect();
    serde_json::to_string(&json!({"instanceTypes": types})).unwrap()
}
