//! Kubelet settings: v1 keeps them on the EC2NodeClass, so a NodePool's settings move to its
//! class (the first NodePool's win; every other one is told).

use super::super::meta::KubeletConfiguration;
use super::{Body, Converter, Notes};

/// A NodePool's kubelet settings on their way to its node class (v1 keeps them there).
pub(super) struct KubeletUse {
    /// The NodePool's output index.
    pub(super) out: usize,
    /// The field they came from.
    pub(super) field: &'static str,
    pub(super) kubelet: Option<KubeletConfiguration>,
}

impl Converter<'_> {
    /// v1 keeps kubelet settings on the EC2NodeClass: the first NodePool's settings go onto
    /// the class; every NodePool whose settings differ is told so.
    pub(super) fn place_kubelet(
        &mut self,
        class: &str,
        uses: &[KubeletUse],
        class_out: Option<usize>,
    ) {
        let Some((first, chosen)) = uses
            .iter()
            .find_map(|u| u.kubelet.as_ref().map(|k| (u, k.clone())))
        else {
            return;
        };
        let json = |k: &KubeletConfiguration| serde_json::to_string(k).unwrap_or_default();
        let first_object = self.outs[first.out].object.clone();
        match class_out.map(|i| &mut self.outs[i].body) {
            Some(Body::Class(c)) => {
                if let Some(spec) = c.spec.as_mut() {
                    spec.kubelet = Some(chosen.clone());
                }
                let target = class_out.unwrap_or_default();
                self.outs[target].comments.push(format!(
                    "spec.kubelet: moved here from {first_object} {} (see the note on its NodePool)",
                    first.field
                ));
                for u in uses {
                    let message = match &u.kubelet {
                        Some(k) if *k == chosen => format!(
                            "moved to EC2NodeClass/{class} spec.kubelet: v1 keeps kubelet settings on the node class"
                        ),
                        Some(k) => format!(
                            "not carried over: EC2NodeClass/{class} now holds {first_object}'s kubelet settings and v1 allows one set per node class; give this NodePool its own copy of the EC2NodeClass with spec.kubelet: {}",
                            json(k)
                        ),
                        None => format!(
                            "absent, but EC2NodeClass/{class} now holds {first_object}'s kubelet settings ({}), which v1 applies to every NodePool using it; give this NodePool its own copy of the EC2NodeClass without them to keep the kubelet defaults",
                            json(&chosen)
                        ),
                    };
                    self.note_on(u.out, u.field, message);
                }
            }
            Some(_) => {
                for u in uses {
                    if let Some(k) = &u.kubelet {
                        self.note_on(
                            u.out,
                            u.field,
                            format!("not carried over: v1 keeps kubelet settings on the node class, and EC2NodeClass/{class} is already v1 and passed through unchanged; add spec.kubelet: {} to it", json(k)),
                        );
                    }
                }
            }
            None => {
                for u in uses {
                    if let Some(k) = &u.kubelet {
                        self.note_on(
                            u.out,
                            u.field,
                            format!("not carried over: v1 keeps kubelet settings on the node class, and EC2NodeClass/{class} is not in the input; add spec.kubelet: {} to it when you convert it", json(k)),
                        );
                    }
                }
            }
        }
    }
}

/// Kubelet settings without `containerRuntime` (v1 has none); `None` when nothing is left.
pub(super) fn strip_runtime(
    mut k: KubeletConfiguration,
    field: &str,
    notes: &mut Notes,
) -> Option<KubeletConfiguration> {
    if let Some(runtime) = k.container_runtime.take() {
        notes.add(
            format!("{field}.containerRuntime"),
            format!("dropped ({runtime:?}): v1 has no containerRuntime, Karpenter v1 nodes run containerd"),
        );
    }
    (k != KubeletConfiguration::default()).then_some(k)
}
