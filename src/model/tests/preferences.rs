//! `PreferencePolicy: Ignore` on the pods themselves (`model::pod::ignore_preferences`).

use crate::model::pod::{ignore_preferences, WhenUnsatisfiable};
use crate::model::requirements::Operator;
use crate::testing::PodBuilder;

/// Preferred node affinity, preferred pod affinity and anti-affinity and `ScheduleAnyway`
/// spreads go; what is required stays; replicas sharing one template still share one copy, and
/// a pod without preferences is left as it was.
#[test]
fn ignoring_preferences_keeps_what_is_required_and_the_replicas_shared() {
    let template = PodBuilder::new("web-0")
        .label("app", "web")
        .preferred_term(10, &[("topology.kubernetes.io/zone", Operator::In, &["a"])])
        .preferred_affinity(1, "kubernetes.io/hostname", &[("app", "db")])
        .preferred_anti_affinity(1, "kubernetes.io/hostname", &[("app", "web")])
        .anti_affinity("topology.kubernetes.io/zone", &[("app", "web")])
        .spread("topology.kubernetes.io/zone", 1, true, &[("app", "web")])
        .spread("kubernetes.io/hostname", 1, false, &[("app", "web")])
        .build();
    let mut replica = template.clone();
    replica.name = "web-1".into();
    let plain = PodBuilder::new("plain").build();
    let mut pods = [template, replica, plain.clone()];
    ignore_preferences(pods.iter_mut());
    let web = &pods[0];
    assert!(web.preferred_node_affinity.is_empty());
    assert!(web.preferred_pod_affinity.is_empty());
    assert!(web.preferred_pod_anti_affinity.is_empty());
    assert_eq!(web.pod_anti_affinity.len(), 1);
    assert_eq!(web.topology_spread.len(), 1);
    assert_eq!(
        web.topology_spread[0].when_unsatisfiable,
        WhenUnsatisfiable::DoNotSchedule
    );
    assert!(pods[0].shares_fields_with(&pods[1]));
    assert_eq!(pods[2], plain);
    assert!(pods[2].shares_fields_with(&plain));
}
