//! Greedy shrinking of a failing world: drop pods, nodes, pools, DaemonSets, types and
//! constraints one at a time while the same rule still breaks (to write a small table test).

use super::{check_plan, planned, Input};
use crate::model::pod::Pod;

fn breaks(input: &Input, rule: &str) -> bool {
    check_plan(input, &planned(input))
        .iter()
        .any(|v| v.rule == rule)
}

/// Every one-step smaller world.
fn smaller(w: &Input) -> Vec<Input> {
    let mut out = Vec::new();
    let mut push = |f: &dyn Fn(&mut Input) -> bool| {
        let mut c = w.clone();
        if f(&mut c) {
            out.push(c);
        }
    };
    for i in 0..w.pods.len() {
        push(&|c| (c.pods.len() > 1).then(|| c.pods.remove(i)).is_some());
    }
    for i in 0..w.existing_nodes.len() {
        push(&|c| {
            c.existing_nodes.remove(i);
            true
        });
        for j in 0..w.existing_nodes[i].pods.len() {
            push(&|c| {
                c.existing_nodes[i].pods.remove(j);
                true
            });
        }
    }
    for i in 0..w.pools.len() {
        push(&|c| (c.pools.len() > 1).then(|| c.pools.remove(i)).is_some());
        for j in 0..w.pools[i].pool.requirements.len() {
            push(&|c| {
                c.pools[i].pool.requirements.remove(j);
                true
            });
        }
        push(&|c| {
            std::mem::take(&mut c.pools[i].pool.taints).len()
                + std::mem::take(&mut c.pools[i].pool.startup_taints).len()
                > 0
        });
        push(&|c| !std::mem::take(&mut c.pools[i].pool.limits).is_empty());
        push(&|c| !std::mem::take(&mut c.pools[i].pool.labels).is_empty());
    }
    for t in 0..w.pools.first().map_or(0, |p| p.instance_types.len()) {
        let name = w.pools[0].instance_types[t].name.clone();
        push(&|c| {
            for p in &mut c.pools {
                p.instance_types.retain(|it| it.name != name);
            }
            c.pools.iter().all(|p| !p.instance_types.is_empty())
        });
    }
    for i in 0..w.daemonsets.len() {
        push(&|c| {
            c.daemonsets.remove(i);
            true
        });
    }
    // Constraints of every pending pod at once (pods of an app share them).
    type Strip = fn(&mut Pod) -> bool;
    let strips: [Strip; 8] = [
        |p| !std::mem::take(&mut p.topology_spread).is_empty(),
        |p| !std::mem::take(&mut p.pod_affinity).is_empty(),
        |p| !std::mem::take(&mut p.pod_anti_affinity).is_empty(),
        |p| !std::mem::take(&mut p.required_node_affinity).is_empty(),
        |p| !std::mem::take(&mut p.preferred_node_affinity).is_empty(),
        |p| !std::mem::take(&mut p.node_selector).is_empty(),
        |p| !std::mem::take(&mut p.tolerations).is_empty(),
        |p| {
            !std::mem::take(&mut p.volumes).is_empty()
                | !std::mem::take(&mut p.host_ports).is_empty()
        },
    ];
    for strip in strips {
        push(&|c| c.pods.iter_mut().fold(false, |any, p| strip(p) | any));
    }
    out
}

/// The smallest world found that still breaks `rule`.
pub(super) fn minimise(mut w: Input, rule: &str) -> Input {
    'outer: loop {
        for c in smaller(&w) {
            if breaks(&c, rule) {
                w = c;
                continue 'outer;
            }
        }
        return w;
    }
}
