//! What the kubeconfig says about AWS, before any cluster adapter exists: the region of the EKS
//! cluster the current (or `--context`) context points at, used to suggest `--region` when the
//! AWS chain has none (most laptops have no default region, but every EKS kubeconfig names one).

use std::path::PathBuf;

use super::GlobalArgs;
use crate::api::yaml::Value;

/// The region of the EKS cluster the kubeconfig's context points at, if it can tell: from an
/// `arn:aws:eks:<region>:…` context or cluster name, an `https://….<region>.eks.amazonaws.com`
/// server, or `--region` in the `aws eks get-token` exec arguments.
pub fn eks_region(kubeconfig: &str, context: Option<&str>) -> Option<String> {
    let doc: Value = serde_saphyr::from_str(kubeconfig).ok()?;
    let context_name = context
        .map(str::to_string)
        .or_else(|| doc.get("current-context")?.as_str().map(str::to_string))?;
    let named = |list: &str, name: &str| -> Option<Value> {
        doc.get(list)?
            .as_sequence()?
            .iter()
            .find(|e| e.get("name").and_then(|n| n.as_str()) == Some(name))
            .cloned()
    };
    if let Some(r) = arn_region(&context_name) {
        return Some(r);
    }
    let ctx = named("contexts", &context_name)?;
    let cluster_name = ctx
        .get("context")?
        .get("cluster")?
        .as_str()
        .unwrap_or_default()
        .to_string();
    if let Some(r) = arn_region(&cluster_name) {
        return Some(r);
    }
    if let Some(server) = named("clusters", &cluster_name).and_then(|c| {
        c.get("cluster")?
            .get("server")?
            .as_str()
            .map(str::to_string)
    }) {
        if let Some(r) = server_region(&server) {
            return Some(r);
        }
    }
    let user_name = ctx.get("context")?.get("user")?.as_str()?.to_string();
    let args = named("users", &user_name)?
        .get("user")?
        .get("exec")?
        .get("args")?
        .as_sequence()?
        .to_vec();
    let args: Vec<&str> = args.iter().filter_map(|a| a.as_str()).collect();
    args.windows(2)
        .find(|w| w[0] == "--region")
        .map(|w| w[1].to_string())
}

fn arn_region(name: &str) -> Option<String> {
    let rest = name
        .strip_prefix("arn:aws:eks:")
        .or_else(|| name.strip_prefix("arn:aws-cn:eks:"))?;
    let region = rest.split(':').next()?;
    (!region.is_empty()).then(|| region.to_string())
}

fn server_region(server: &str) -> Option<String> {
    let host = server.strip_prefix("https://")?.split(['/', ':']).next()?;
    let host = host.strip_suffix(".eks.amazonaws.com")?;
    host.rsplit('.')
        .next()
        .map(str::to_string)
        .filter(|r| r.contains('-'))
}

/// Reads the kubeconfig kubectl would use (`--kubeconfig`, else the first `KUBECONFIG` entry,
/// else `~/.kube/config`) and returns its EKS region, if any. Never fails: this is only a hint.
pub fn region_hint(global: &GlobalArgs) -> Option<String> {
    let path = global
        .kubeconfig
        .as_ref()
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("KUBECONFIG")
                .and_then(|v| std::env::split_paths(&v).next())
                .filter(|p| !p.as_os_str().is_empty())
        })
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".kube/config")))?;
    let text = std::fs::read_to_string(path).ok()?;
    // An empty flag is one not given, as kubectl takes it (src/k8s/config.rs `without_empty`).
    eks_region(&text, global.context.as_deref().filter(|c| !c.is_empty()))
        .map(|r| format!("the kubeconfig's EKS cluster is in {r}: --region {r}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const EKS: &str = r#"
apiVersion: v1
kind: Config
current-context: arn:aws:eks:eu-west-1:123456789012:cluster/prod
contexts:
- name: arn:aws:eks:eu-west-1:123456789012:cluster/prod
  context: {cluster: arn:aws:eks:eu-west-1:123456789012:cluster/prod, user: prod}
- name: staging
  context: {cluster: staging, user: staging}
- name: eksctl
  context: {cluster: eksctl-cluster, user: eksctl}
clusters:
- name: staging
  cluster: {server: "https://ABCDEF0123.gr7.us-west-2.eks.amazonaws.com"}
- name: eksctl-cluster
  cluster: {server: "https://10.0.0.1:6443"}
users:
- name: eksctl
  user:
    exec:
      command: aws
      args: [eks, get-token, --cluster-name, demo, --region, ap-south-1]
"#;

    #[test]
    fn finds_the_region_from_arn_server_or_exec_args() {
        assert_eq!(eks_region(EKS, None).as_deref(), Some("eu-west-1"));
        assert_eq!(
            eks_region(EKS, Some("staging")).as_deref(),
            Some("us-west-2")
        );
        assert_eq!(
            eks_region(EKS, Some("eksctl")).as_deref(),
            Some("ap-south-1")
        );
        assert_eq!(eks_region(EKS, Some("missing")), None);
        assert_eq!(eks_region("not: [yaml", None), None);
        assert_eq!(eks_region("", None), None);
    }
}
