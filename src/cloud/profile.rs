//! Instance profile resolution (docs/spec.md §5.2), in order:
//!
//! 1. the `--instance-profile` flag;
//! 2. the node class's `instanceProfile`;
//! 3. the instance profile holding the class's `role` (IAM ListInstanceProfilesForRole; when
//!    several hold it, the one the controller last wrote to the class status, else the first
//!    by name);
//! 4. (v1alpha5) `aws.defaultInstanceProfile` from the `karpenter-global-settings` ConfigMap
//!    (filled in by the cluster adapter);
//!
//! else a clear error naming everything tried. The decision is pure ([`plan`], [`decide`]);
//! [`resolve`] sends the one IAM call through [`Cloud`] when step 3 needs it.

use std::fmt;

use super::types::{Cloud, CloudError};

/// What resolution starts from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ProfileInputs<'a> {
    /// Node class name (for messages), e.g. `default`.
    pub class: &'a str,
    /// `--instance-profile`.
    pub flag: Option<&'a str>,
    /// The class's `instanceProfile`.
    pub class_profile: Option<&'a str>,
    /// The class's `role` (a name, or a role ARN).
    pub role: Option<&'a str>,
    /// The class status's `instanceProfile` (a tie-breaker between several profiles of a role).
    pub status_profile: Option<&'a str>,
    /// `aws.defaultInstanceProfile` of the `karpenter-global-settings` ConfigMap (v1alpha5).
    pub default_instance_profile: Option<&'a str>,
}

fn given(v: Option<&str>) -> Option<&str> {
    v.map(str::trim).filter(|s| !s.is_empty())
}

/// Where a resolved profile came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProfileSource {
    /// `--instance-profile`.
    Flag,
    /// The class's `instanceProfile`.
    NodeClass,
    /// An instance profile holding the class's role.
    Role(String),
    /// `aws.defaultInstanceProfile` in `karpenter-global-settings`.
    GlobalSettings,
}

impl fmt::Display for ProfileSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProfileSource::Flag => f.write_str("--instance-profile"),
            ProfileSource::NodeClass => f.write_str("spec.instanceProfile"),
            ProfileSource::Role(role) => write!(f, "the instance profile of role {role}"),
            ProfileSource::GlobalSettings => {
                f.write_str("aws.defaultInstanceProfile in karpenter-global-settings")
            }
        }
    }
}

/// A resolved instance profile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Profile {
    /// Instance profile name.
    pub name: String,
    /// Where it came from.
    pub source: ProfileSource,
    /// Other profiles that hold the same role (not chosen).
    pub others: Vec<String>,
}

/// Why no instance profile was found.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ProfileError {
    /// Nothing named one; `tried` lists each step and why it gave nothing.
    #[error("no instance profile for {class}: tried {}", tried.join("; "))]
    NotFound {
        /// Node class name.
        class: String,
        /// One entry per step.
        tried: Vec<String>,
    },
    /// The IAM call failed for another reason than an unknown role.
    #[error("instance profile for {class}: {source}")]
    Cloud {
        /// Node class name.
        class: String,
        /// The failure.
        source: CloudError,
    },
}

/// The first step of resolution.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Plan {
    /// Decided without AWS.
    Decided(Profile),
    /// Ask IAM which profiles hold this role (a name), then [`decide`].
    LookUpRole(String),
}

/// A role name from a name or ARN (`arn:aws:iam::123:role/path/Name` → `Name`).
pub fn role_name(role: &str) -> &str {
    if role.starts_with("arn:") {
        role.rsplit('/').next().unwrap_or(role)
    } else {
        role
    }
}

fn decided(name: &str, source: ProfileSource) -> Plan {
    Plan::Decided(Profile {
        name: name.to_string(),
        source,
        others: Vec::new(),
    })
}

/// Steps 1, 2, and (without a role) 4.
pub fn plan(inputs: &ProfileInputs) -> Result<Plan, ProfileError> {
    if let Some(p) = given(inputs.flag) {
        return Ok(decided(p, ProfileSource::Flag));
    }
    if let Some(p) = given(inputs.class_profile) {
        return Ok(decided(p, ProfileSource::NodeClass));
    }
    if let Some(role) = given(inputs.role) {
        return Ok(Plan::LookUpRole(role_name(role).to_string()));
    }
    decide(inputs, None)
}

/// Steps 3 and 4, given IAM's answer for the role: `Some(Ok(profiles))`, `Some(Err(why))`
/// for a role IAM does not know (`NoSuchEntity`), or `None` when the class has no role.
pub fn decide(
    inputs: &ProfileInputs,
    role_answer: Option<Result<Vec<String>, String>>,
) -> Result<Plan, ProfileError> {
    let mut tried = vec![
        "--instance-profile (not given)".to_string(),
        "spec.instanceProfile (not set)".to_string(),
    ];
    match (given(inputs.role), role_answer) {
        (Some(role), Some(Ok(mut profiles))) if !profiles.is_empty() => {
            profiles.sort();
            profiles.dedup();
            let chosen = given(inputs.status_profile)
                .and_then(|s| profiles.iter().position(|p| p == s))
                .unwrap_or(0);
            let name = profiles.remove(chosen);
            return Ok(Plan::Decided(Profile {
                name,
                source: ProfileSource::Role(role_name(role).to_string()),
                others: profiles,
            }));
        }
        (Some(role), Some(Ok(_))) => tried.push(format!(
            "spec.role {} (no instance profile holds it)",
            role_name(role)
        )),
        (Some(role), Some(Err(why))) => {
            tried.push(format!("spec.role {} ({why})", role_name(role)))
        }
        (Some(role), None) => tried.push(format!("spec.role {} (not looked up)", role_name(role))),
        (None, _) => tried.push("spec.role (not set)".to_string()),
    }
    if let Some(p) = given(inputs.default_instance_profile) {
        return Ok(decided(p, ProfileSource::GlobalSettings));
    }
    tried.push(
        "aws.defaultInstanceProfile in the karpenter-global-settings ConfigMap (not set)"
            .to_string(),
    );
    Err(ProfileError::NotFound {
        class: inputs.class.to_string(),
        tried,
    })
}

/// Resolves the instance profile, calling IAM only for step 3.
pub fn resolve(cloud: &dyn Cloud, inputs: &ProfileInputs) -> Result<Profile, ProfileError> {
    let role = match plan(inputs)? {
        Plan::Decided(p) => return Ok(p),
        Plan::LookUpRole(role) => role,
    };
    let answer = match cloud.list_instance_profiles_for_role(&role) {
        Ok(profiles) => Ok(profiles),
        Err(e) if e.code() == Some("NoSuchEntity") => Err("IAM has no such role".to_string()),
        Err(source) => {
            return Err(ProfileError::Cloud {
                class: inputs.class.to_string(),
                source,
            })
        }
    };
    match decide(inputs, Some(answer))? {
        Plan::Decided(p) => Ok(p),
        // `decide` never asks again.
        Plan::LookUpRole(role) => Err(ProfileError::NotFound {
            class: inputs.class.to_string(),
            tried: vec![format!("spec.role {role}")],
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cloud::fake::FakeCloud;

    fn inputs() -> ProfileInputs<'static> {
        ProfileInputs {
            class: "default",
            ..ProfileInputs::default()
        }
    }

    fn name(p: Result<Plan, ProfileError>) -> (String, ProfileSource) {
        match p.unwrap() {
            Plan::Decided(p) => (p.name, p.source),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_flag_wins_then_the_class_profile() {
        let all = ProfileInputs {
            flag: Some("FromFlag"),
            class_profile: Some("FromClass"),
            role: Some("Role"),
            default_instance_profile: Some("FromSettings"),
            ..inputs()
        };
        assert_eq!(name(plan(&all)), ("FromFlag".into(), ProfileSource::Flag));
        let no_flag = ProfileInputs {
            flag: Some("  "),
            ..all
        };
        assert_eq!(
            name(plan(&no_flag)),
            ("FromClass".into(), ProfileSource::NodeClass)
        );
    }

    #[test]
    fn a_role_is_looked_up_before_global_settings() {
        let i = ProfileInputs {
            role: Some("arn:aws:iam::123456789012:role/nodes/KarpenterNodeRole"),
            default_instance_profile: Some("FromSettings"),
            ..inputs()
        };
        assert_eq!(
            plan(&i).unwrap(),
            Plan::LookUpRole("KarpenterNodeRole".into())
        );
        let two = decide(&i, Some(Ok(vec!["b".into(), "a".into()]))).unwrap();
        assert_eq!(
            two,
            Plan::Decided(Profile {
                name: "a".into(),
                source: ProfileSource::Role("KarpenterNodeRole".into()),
                others: vec!["b".into()],
            })
        );
        let with_status = ProfileInputs {
            status_profile: Some("b"),
            ..i
        };
        assert_eq!(
            name(decide(&with_status, Some(Ok(vec!["a".into(), "b".into()])))).0,
            "b"
        );
        // A role no profile holds falls through to the global settings.
        assert_eq!(
            name(decide(&i, Some(Ok(vec![])))),
            ("FromSettings".into(), ProfileSource::GlobalSettings)
        );
    }

    #[test]
    fn global_settings_are_the_last_resort() {
        let i = ProfileInputs {
            default_instance_profile: Some("FromSettings"),
            ..inputs()
        };
        assert_eq!(
            name(plan(&i)),
            ("FromSettings".into(), ProfileSource::GlobalSettings)
        );
    }

    #[test]
    fn the_error_names_every_step_tried() {
        let err = plan(&inputs()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "no instance profile for default: tried --instance-profile (not given); spec.instanceProfile \
             (not set); spec.role (not set); aws.defaultInstanceProfile in the karpenter-global-settings \
             ConfigMap (not set)"
        );
        let i = ProfileInputs {
            role: Some("Gone"),
            ..inputs()
        };
        let err = decide(&i, Some(Err("IAM has no such role".into()))).unwrap_err();
        assert!(
            err.to_string()
                .contains("spec.role Gone (IAM has no such role)"),
            "{err}"
        );
    }

    #[test]
    fn resolve_calls_iam_once_and_only_for_a_role() {
        let mut cloud = FakeCloud::new();
        cloud
            .roles
            .insert("NodeRole".into(), vec!["NodeProfile".into()]);
        cloud.roles.insert("Bare".into(), vec![]);
        let by_class = ProfileInputs {
            class_profile: Some("P"),
            role: Some("NodeRole"),
            ..inputs()
        };
        assert_eq!(resolve(&cloud, &by_class).unwrap().name, "P");
        assert_eq!(cloud.call_counts().total(), 0);
        let by_role = ProfileInputs {
            role: Some("NodeRole"),
            ..inputs()
        };
        let p = resolve(&cloud, &by_role).unwrap();
        assert_eq!(p.name, "NodeProfile");
        assert_eq!(
            p.source.to_string(),
            "the instance profile of role NodeRole"
        );
        assert_eq!(
            cloud.call_counts().get("IAM.ListInstanceProfilesForRole"),
            1
        );
        for role in ["Bare", "Missing"] {
            let i = ProfileInputs {
                role: Some(role),
                ..inputs()
            };
            assert!(matches!(
                resolve(&cloud, &i),
                Err(ProfileError::NotFound { .. })
            ));
        }
        cloud.fail(
            "IAM.ListInstanceProfilesForRole",
            CloudError::Api {
                service: "IAM".into(),
                operation: "ListInstanceProfilesForRole".into(),
                code: "AccessDenied".into(),
                message: "no iam:ListInstanceProfilesForRole".into(),
            },
        );
        let err = resolve(&cloud, &by_role).unwrap_err();
        assert!(matches!(err, ProfileError::Cloud { ref source, .. } if source.is_permission()));
        assert!(
            err.to_string().starts_with(
                "instance profile for default: IAM ListInstanceProfilesForRole: AccessDenied"
            ),
            "{err}"
        );
    }
}
