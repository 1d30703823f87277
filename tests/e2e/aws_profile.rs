//! Instance profile resolution against moto's IAM: the launcher seeds
//! `KarpenterNodeRole-<cluster>` (held by `KarpenterNodeInstanceProfile-<cluster>`) and
//! `RoleWithoutProfile`.

use kubectl_karpenter::cloud::profile::{self, ProfileError, ProfileInputs, ProfileSource};
use kubectl_karpenter::cloud::Cloud;

use crate::moto::Moto;

fn inputs(role: &'static str) -> ProfileInputs<'static> {
    ProfileInputs {
        class: "default",
        role: Some(role),
        ..ProfileInputs::default()
    }
}

#[test]
fn instance_profile_of_a_role_comes_from_iam() {
    let moto = Moto::shared();
    assert_eq!(
        moto.seed["roles"]["KarpenterNodeRole-test-cluster"][0],
        "KarpenterNodeInstanceProfile-test-cluster"
    );
    let cloud = moto.cloud();
    let p = profile::resolve(&cloud, &inputs("KarpenterNodeRole-test-cluster")).unwrap();
    assert_eq!(p.name, "KarpenterNodeInstanceProfile-test-cluster");
    assert_eq!(
        p.source,
        ProfileSource::Role("KarpenterNodeRole-test-cluster".into())
    );
    assert!(p.others.is_empty());
    // An ARN names the same role.
    let arn = ProfileInputs {
        role: Some("arn:aws:iam::123456789012:role/KarpenterNodeRole-test-cluster"),
        ..inputs("")
    };
    assert_eq!(
        profile::resolve(&cloud, &arn).unwrap().name,
        "KarpenterNodeInstanceProfile-test-cluster"
    );
    assert_eq!(
        cloud.call_counts().get("IAM.ListInstanceProfilesForRole"),
        2,
        "{}",
        cloud.call_counts().summary()
    );

    // The flag and the class's own profile need no IAM call.
    let flagged = ProfileInputs {
        flag: Some("Chosen"),
        ..inputs("KarpenterNodeRole-test-cluster")
    };
    assert_eq!(profile::resolve(&cloud, &flagged).unwrap().name, "Chosen");
    assert_eq!(cloud.call_counts().total(), 2);
}

#[test]
fn instance_profile_missing_falls_back_then_fails_clearly() {
    let moto = Moto::shared();
    let cloud = moto.cloud();
    for role in ["RoleWithoutProfile", "NoSuchRole"] {
        let fallback = ProfileInputs {
            default_instance_profile: Some("FromGlobalSettings"),
            ..inputs(role)
        };
        let p = profile::resolve(&cloud, &fallback).unwrap();
        assert_eq!(
            (p.name.as_str(), p.source),
            ("FromGlobalSettings", ProfileSource::GlobalSettings)
        );
        let err = profile::resolve(&cloud, &inputs(role)).unwrap_err();
        assert!(matches!(err, ProfileError::NotFound { .. }), "{err:?}");
        let text = err.to_string();
        assert!(
            text.starts_with("no instance profile for default: tried "),
            "{text}"
        );
        assert!(text.contains(&format!("spec.role {role} (")), "{text}");
        assert!(text.contains("karpenter-global-settings"), "{text}");
    }
    // moto answers an empty list for an unknown role where AWS answers `NoSuchEntity` (that
    // path, "IAM has no such role", is covered by the unit tests with the fake); either way the
    // step falls through and the error names the role.
}
