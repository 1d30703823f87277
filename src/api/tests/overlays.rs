//! NodeOverlays (`karpenter.sh/v1alpha1`) as manifests: read into the model, and refused as the
//! API server (the CRD's patterns and CEL rules) or Karpenter's runtime validation would.

use super::{error_of, load_str};
use crate::model::overlay::PriceChange;
use crate::model::requirements::Operator;

const OVERLAY: &str = "apiVersion: karpenter.sh/v1alpha1
kind: NodeOverlay
metadata: {name: discount}
spec:
  weight: 10
  requirements:
  - {key: node.kubernetes.io/instance-type, operator: In, values: [m5.large]}
  priceAdjustment: \"-10%\"
  capacity: {smarter-devices/fuse: \"2\"}
";

#[test]
fn a_node_overlay_is_read() {
    let m = load_str("o.yaml", OVERLAY).unwrap();
    let o = &m.node_overlays[0];
    assert_eq!(o.name, "discount");
    assert_eq!(o.weight, 10);
    assert_eq!(o.requirements[0].operator, Operator::In);
    assert_eq!(o.price, Some(PriceChange::Percent(-10.0)));
    assert_eq!(o.capacity.get("smarter-devices/fuse"), 2000);
    let m = load_str(
        "o.yaml",
        &OVERLAY.replace("priceAdjustment: \"-10%\"", "price: \"0.25\""),
    )
    .unwrap();
    assert_eq!(m.node_overlays[0].price, Some(PriceChange::Set(0.25)));
}

#[test]
fn invalid_node_overlays_are_one_line_naming_the_field() {
    let cases = [
        (
            OVERLAY.replace("  capacity:", "  price: \"1\"\n  capacity:"),
            "o.yaml: NodeOverlay/discount: spec: cannot set both 'price' and 'priceAdjustment'",
        ),
        (
            OVERLAY.replace("\"-10%\"", "\"-200%\""),
            "o.yaml: NodeOverlay/discount: spec.priceAdjustment: \"-200%\" is not a price adjustment (+0.5, -0.5, +10%, or -10% down to -100%)",
        ),
        (
            OVERLAY.replace("smarter-devices/fuse", "cpu"),
            "o.yaml: NodeOverlay/discount: spec.capacity.cpu: only extended resources can be added (cpu, memory, ephemeral-storage and pods are restricted)",
        ),
        (
            OVERLAY.replace("weight: 10", "weight: 10001"),
            "o.yaml: NodeOverlay/discount: spec.weight: must be between 1 and 10000, got 10001",
        ),
        (
            OVERLAY.replace("operator: In", "operator: Inn"),
            "o.yaml: NodeOverlay/discount: spec.requirements[0].operator: unknown operator \"Inn\" (expected In, NotIn, Exists, DoesNotExist, Gt, Lt, Gte, Lte)",
        ),
        (
            OVERLAY.replace("v1alpha1", "v1"),
            "o.yaml: NodeOverlay/discount: unknown apiVersion \"karpenter.sh/v1\" (expected karpenter.sh/v1alpha1)",
        ),
    ];
    for (text, want) in cases {
        assert_eq!(error_of("o.yaml", &text), want);
    }
}
