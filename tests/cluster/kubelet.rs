//! The EC2-backed "kubelet" (`--ec2-endpoint`): every second it lists instances through the EC2
//! Query API (plain HTTP, unsigned: moto does not check signatures) and
//!
//! - registers a Ready Node for each `running` instance: name = private DNS name, providerID
//!   `aws:///<zone>/<instance-id>`, the well-known labels a kubelet/cloud provider sets
//!   (hostname, os, arch, instance type, zone, region), capacity from DescribeInstanceTypes
//!   (vCPUs, memory less the 7.5% VM overhead Karpenter assumes, ENI-limited max pods) and
//!   allocatable after the EKS AMIs' kube-reserved/eviction formulas;
//! - adds the labels and taints **parsed from the instance's user data** (`--node-labels=`,
//!   `--register-with-taints=`, `--max-pods=` anywhere in AL2 scripts, AL2023 NodeConfig and MIME
//!   parts; Bottlerocket `[settings.kubernetes.node-labels]` / `node-taints` tables), so a wrong
//!   user data shows as a wrong Node;
//! - deletes the Nodes it registered once their instance is no longer running;
//! - terminates the instances the termination controller (`karpenter.rs`) has drained, and
//!   records every instance's state for it.

use super::api::{self, DeleteOpts, Query};
use super::karpenter;
use super::util::{base64_decode, meta_str};
use super::State;
use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const MANAGED: &str = "test-cluster.kubectl-karpenter.dev/kubelet";

/// Polls EC2 and keeps Nodes in step with running instances.
pub async fn run(state: Arc<State>, endpoint: String) {
    let mut types: HashMap<String, Value> = HashMap::new();
    let mut user_data: HashMap<String, String> = HashMap::new();
    let mut last_error: Option<String> = None;
    loop {
        // Each new error is reported once (and recovery too), so a wrong endpoint is visible.
        match sync(&state, &endpoint, &mut types, &mut user_data).await {
            Err(e) if last_error.as_ref() != Some(&e) => {
                eprintln!("ec2 kubelet: {e}");
                last_error = Some(e);
            }
            Ok(()) if last_error.take().is_some() => {
                eprintln!("ec2 kubelet: {endpoint} answers again")
            }
            _ => {}
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

/// A minimal XML element tree (enough for EC2 Query API answers).
#[derive(Debug, Default, Clone)]
pub struct Xml {
    pub name: String,
    pub text: String,
    pub children: Vec<Xml>,
}

impl Xml {
    pub fn parse(s: &str) -> Xml {
        let mut stack: Vec<Xml> = vec![Xml::default()];
        let mut rest = s;
        while let Some(lt) = rest.find('<') {
            let text = &rest[..lt];
            if let Some(top) = stack.last_mut() {
                top.text.push_str(&unescape(text));
            }
            rest = &rest[lt..];
            let Some(gt) = rest.find('>') else { break };
            let tag = &rest[1..gt];
            rest = &rest[gt + 1..];
            if tag.starts_with('?') || tag.starts_with('!') {
                continue;
            }
            if let Some(name) = tag.strip_prefix('/') {
                let _ = name;
                if stack.len() > 1 {
                    let done = stack.pop().unwrap();
                    stack.last_mut().unwrap().children.push(done);
                }
            } else {
                let self_closing = tag.ends_with('/');
                let name = tag
                    .trim_end_matches('/')
                    .split_whitespace()
                    .next()
                    .unwrap_or("")
                    .to_string();
                let el = Xml {
                    name,
                    ..Xml::default()
                };
                if self_closing {
                    stack.last_mut().unwrap().children.push(el);
                } else {
                    stack.push(el);
                }
            }
        }
        while stack.len() > 1 {
            let done = stack.pop().unwrap();
            stack.last_mut().unwrap().children.push(done);
        }
        stack.pop().unwrap_or_default()
    }

    pub fn child(&self, name: &str) -> Option<&Xml> {
        self.children.iter().find(|c| c.name == name)
    }

    /// Follows a `/`-separated path of child names.
    pub fn at(&self, path: &str) -> Option<&Xml> {
        path.split('/').try_fold(self, |x, p| x.child(p))
    }

    pub fn text_at(&self, path: &str) -> String {
        self.at(path)
            .map(|x| x.text.trim().to_string())
            .unwrap_or_default()
    }

    /// The `<item>` children of the element at `path`.
    pub fn items(&self, path: &str) -> Vec<&Xml> {
        self.at(path)
            .map(|x| x.children.iter().filter(|c| c.name == "item").collect())
            .unwrap_or_default()
    }
}

fn unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&#xA;", "\n")
        .replace("&#xD;", "\r")
        .replace("&amp;", "&")
}

fn form_encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// One EC2 Query API call over plain HTTP/1.1.
async fn ec2_call(endpoint: &str, region: &str, params: &[(&str, String)]) -> Result<Xml, String> {
    let hostport = endpoint
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_string();
    let mut body = String::from("Version=2016-11-15");
    for (k, v) in params {
        body.push('&');
        body.push_str(&form_encode(k));
        body.push('=');
        body.push_str(&form_encode(v));
    }
    let req = format!(
        "POST / HTTP/1.1\r\nHost: {hostport}\r\nContent-Type: application/x-www-form-urlencoded; charset=utf-8\r\nAuthorization: AWS4-HMAC-SHA256 Credential=testing/20240101/{region}/ec2/aws4_request, SignedHeaders=host, Signature=0\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let mut stream = tokio::net::TcpStream::connect(&hostport)
        .await
        .map_err(|e| e.to_string())?;
    stream
        .write_all(req.as_bytes())
        .await
        .map_err(|e| e.to_string())?;
    let mut buf = Vec::new();
    stream
        .read_to_end(&mut buf)
        .await
        .map_err(|e| e.to_string())?;
    let text = String::from_utf8_lossy(&buf).into_owned();
    let (head, payload) = text.split_once("\r\n\r\n").ok_or("malformed HTTP answer")?;
    let payload = if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        dechunk(payload)
    } else {
        payload.to_string()
    };
    let status_ok = head.split_whitespace().nth(1) == Some("200");
    let xml = Xml::parse(&payload);
    if !status_ok {
        return Err(format!(
            "EC2 answered {}: {}",
            head.lines().next().unwrap_or(""),
            payload.trim()
        ));
    }
    Ok(xml)
}

fn dechunk(s: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some((size, after)) = rest.split_once("\r\n") {
        let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if n == 0 || after.len() < n {
            break;
        }
        out.push_str(&after[..n]);
        rest = after[n..].trim_start_matches("\r\n");
    }
    out
}

/// Labels, taints and max pods a kubelet would take from this user data.
#[derive(Debug, Default, PartialEq)]
pub struct Registration {
    pub labels: BTreeMap<String, String>,
    pub taints: Vec<Value>,
    pub max_pods: Option<i64>,
}

/// Parses user data the way the AMIs' bootstrap paths would hand it to the kubelet.
pub fn parse_user_data(text: &str) -> Registration {
    let mut r = Registration::default();
    let stop = |c: char| c.is_whitespace() || matches!(c, '\'' | '"' | ']' | '\\');
    for (flag, kind) in [
        ("--node-labels=", 0),
        ("--register-with-taints=", 1),
        ("--max-pods=", 2),
    ] {
        let mut rest = text;
        while let Some(i) = rest.find(flag) {
            let after = &rest[i + flag.len()..];
            // Karpenter's AL2 user data quotes the value: --node-labels="k=v,...".
            let after = after.strip_prefix('"').unwrap_or(after);
            let end = after.find(stop).unwrap_or(after.len());
            let value = &after[..end];
            rest = &after[end..];
            match kind {
                0 => {
                    for kv in value.split(',').filter(|s| !s.is_empty()) {
                        if let Some((k, v)) = kv.split_once('=') {
                            r.labels.insert(k.to_string(), v.to_string());
                        }
                    }
                }
                1 => {
                    for t in value.split(',').filter(|s| !s.is_empty()) {
                        r.taints.push(parse_taint(t));
                    }
                }
                _ => r.max_pods = value.parse().ok(),
            }
        }
    }
    // Bottlerocket TOML settings.
    let mut table = "";
    for line in text.lines() {
        let l = line.trim();
        if l.starts_with('[') {
            table = l;
            continue;
        }
        let Some((k, v)) = l.split_once('=') else {
            continue;
        };
        let k = k.trim().trim_matches('"').to_string();
        let v = v.trim();
        match table {
            "[settings.kubernetes.node-labels]" => {
                r.labels.insert(k, v.trim_matches('"').to_string());
            }
            "[settings.kubernetes.node-taints]" => {
                let vals: Vec<&str> = v
                    .trim_matches(|c| c == '[' || c == ']')
                    .split(',')
                    .map(|s| s.trim().trim_matches('"'))
                    .filter(|s| !s.is_empty())
                    .collect();
                for val in vals {
                    r.taints.push(parse_taint(&format!("{k}={val}")));
                }
            }
            "[settings.kubernetes]" if k == "max-pods" => r.max_pods = v.parse().ok(),
            _ => {}
        }
    }
    if let Some(i) = text.find("maxPods:") {
        r.max_pods = text[i + 8..]
            .split_whitespace()
            .next()
            .and_then(|v| v.parse().ok());
    }
    r.taints.extend(register_with_taints(text));
    r
}

/// AL2023's NodeConfig `kubelet.config.registerWithTaints` (a YAML list of `effect` / `key` /
/// `value` mappings, as Karpenter's `nodeadm.go` writes it).
fn register_with_taints(text: &str) -> Vec<Value> {
    let Some(i) = text.find("registerWithTaints:") else {
        return Vec::new();
    };
    let mut taints: Vec<serde_json::Map<String, Value>> = Vec::new();
    for line in text[i..].lines().skip(1) {
        let l = line.trim_start();
        let item = l.strip_prefix("- ");
        let Some((k, v)) = item.unwrap_or(l).split_once(": ") else {
            break;
        };
        if !matches!(k, "effect" | "key" | "value") {
            break;
        }
        if item.is_some() || taints.is_empty() {
            taints.push(serde_json::Map::new());
        }
        if let Some(t) = taints.last_mut() {
            t.insert(k.to_string(), json!(v.trim().trim_matches('"')));
        }
    }
    taints.into_iter().map(Value::Object).collect()
}

/// `key=value:Effect` or `key:Effect`.
fn parse_taint(t: &str) -> Value {
    let (kv, effect) = t.rsplit_once(':').unwrap_or((t, "NoSchedule"));
    match kv.split_once('=') {
        Some((k, v)) => json!({"key": k, "value": v, "effect": effect}),
        None => json!({"key": kv, "effect": effect}),
    }
}

/// `kube-reserved` CPU of the EKS AMIs, in millicores, for `vcpus` cores.
pub fn kube_reserved_cpu_millis(vcpus: i64) -> i64 {
    let mut m = 0.0;
    for core in 0..vcpus {
        m += match core {
            0 => 60.0,
            1 => 10.0,
            2 | 3 => 5.0,
            _ => 2.5,
        };
    }
    m as i64
}

/// The Node a kubelet on this instance registers.
pub fn node_for(
    inst: &Xml,
    itype: Option<&Value>,
    user_data: &str,
    region: &str,
    version: &str,
) -> Value {
    let id = inst.text_at("instanceId");
    let zone = inst.text_at("placement/availabilityZone");
    let ip = inst.text_at("privateIpAddress");
    let dns = inst.text_at("privateDnsName");
    let name = if dns.is_empty() {
        id.clone()
    } else {
        dns.clone()
    };
    let ty = inst.text_at("instanceType");
    let arch = match inst.text_at("architecture").as_str() {
        "arm64" => "arm64",
        _ => "amd64",
    };
    let reg = parse_user_data(user_data);
    let vcpus = itype
        .and_then(|t| t.get("vcpus"))
        .and_then(Value::as_i64)
        .unwrap_or(2);
    let mem_mib = itype
        .and_then(|t| t.get("memory_mib"))
        .and_then(Value::as_i64)
        .unwrap_or(4096);
    let eni_pods = itype
        .and_then(|t| t.get("max_pods"))
        .and_then(Value::as_i64)
        .unwrap_or(110);
    let pods = reg.max_pods.unwrap_or(eni_pods);
    let cap_mem = (mem_mib as f64 * 0.925) as i64;
    let alloc_mem = cap_mem - (11 * pods + 255) - 100;
    let alloc_cpu = vcpus * 1000 - kube_reserved_cpu_millis(vcpus);
    let mut labels = Map::new();
    for (k, v) in [
        ("kubernetes.io/hostname", name.as_str()),
        ("kubernetes.io/os", "linux"),
        ("kubernetes.io/arch", arch),
        ("beta.kubernetes.io/os", "linux"),
        ("beta.kubernetes.io/arch", arch),
        ("node.kubernetes.io/instance-type", ty.as_str()),
        ("beta.kubernetes.io/instance-type", ty.as_str()),
        ("topology.kubernetes.io/zone", zone.as_str()),
        ("topology.kubernetes.io/region", region),
        ("failure-domain.beta.kubernetes.io/zone", zone.as_str()),
        ("failure-domain.beta.kubernetes.io/region", region),
    ] {
        labels.insert(k.into(), json!(v));
    }
    for (k, v) in reg.labels {
        labels.insert(k, json!(v));
    }
    let mut spec = json!({"providerID": format!("aws:///{zone}/{id}")});
    if !reg.taints.is_empty() {
        spec["taints"] = Value::Array(reg.taints);
    }
    let mut node = json!({
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels, "annotations": {MANAGED: "ec2", "node.alpha.kubernetes.io/ttl": "0"}},
        "spec": spec,
        "status": {
            "capacity": {"cpu": vcpus.to_string(), "memory": format!("{cap_mem}Mi"), "pods": pods.to_string(), "ephemeral-storage": "20959212Ki"},
            "allocatable": {"cpu": format!("{alloc_cpu}m"), "memory": format!("{alloc_mem}Mi"), "pods": pods.to_string(), "ephemeral-storage": "18242267924"},
            "addresses": [
                {"type": "InternalIP", "address": ip},
                {"type": "InternalDNS", "address": dns},
                {"type": "Hostname", "address": dns},
            ],
            "nodeInfo": {"machineID": id, "systemUUID": id},
        },
    });
    let cfg = super::Config {
        kubernetes_version: version.into(),
        ..super::Config::default()
    };
    super::controllers::fill_node_status(&mut node, &cfg);
    node
}

async fn instance_type(endpoint: &str, region: &str, ty: &str) -> Result<Value, String> {
    let x = ec2_call(
        endpoint,
        region,
        &[
            ("Action", "DescribeInstanceTypes".into()),
            ("InstanceType.1", ty.into()),
        ],
    )
    .await?;
    let item = x
        .child("DescribeInstanceTypesResponse")
        .map(|r| r.items("instanceTypeSet"))
        .and_then(|i| i.into_iter().next().cloned())
        .ok_or_else(|| format!("no instance type {ty}"))?;
    let num = |p: &str| item.text_at(p).parse::<i64>().unwrap_or(0);
    let enis = num("networkInfo/maximumNetworkInterfaces");
    let ips = num("networkInfo/ipv4AddressesPerInterface");
    Ok(json!({
        "vcpus": num("vCpuInfo/defaultVCpus"),
        "memory_mib": num("memoryInfo/sizeInMiB"),
        "max_pods": if enis > 0 && ips > 0 { enis * (ips - 1) + 2 } else { 110 },
    }))
}

/// TerminateInstances for the instances the termination controller (`karpenter.rs`) has
/// drained, one call each so that an unknown id does not fail the others; EC2's answer is
/// recorded for the controller.
async fn terminate_drained(state: &Arc<State>, endpoint: &str, region: &str) -> Result<(), String> {
    let ids: Vec<String> = {
        let st = state.store.lock().unwrap();
        st.instances.to_terminate.iter().cloned().collect()
    };
    for id in ids {
        let answer = ec2_call(
            endpoint,
            region,
            &[
                ("Action", "TerminateInstances".into()),
                ("InstanceId.1", id.clone()),
            ],
        )
        .await;
        let now = match answer {
            Ok(x) => x
                .child("TerminateInstancesResponse")
                .map(|r| r.items("instancesSet"))
                .and_then(|items| items.first().map(|i| i.text_at("currentState/name")))
                .unwrap_or_default(),
            Err(e) if e.contains("InvalidInstanceID") => karpenter::NOT_FOUND.to_string(),
            Err(e) => return Err(e),
        };
        let mut st = state.store.lock().unwrap();
        if st.instances.record(&id, &now) {
            st.dirty = true;
        }
    }
    Ok(())
}

async fn sync(
    state: &Arc<State>,
    endpoint: &str,
    types: &mut HashMap<String, Value>,
    user_data: &mut HashMap<String, String>,
) -> Result<(), String> {
    let region = state.config.region.clone();
    // Before DescribeInstances: an instance terminated here is not seen running (and its Node
    // re-registered) by this pass.
    terminate_drained(state, endpoint, &region).await?;
    let mut running: Vec<Xml> = Vec::new();
    let mut states: Vec<(String, String)> = Vec::new();
    // Every page (moto answers 100 instances per page, with a NextToken).
    let mut token: Option<String> = None;
    loop {
        let mut params = vec![("Action", "DescribeInstances".to_string())];
        if let Some(t) = &token {
            params.push(("NextToken", t.clone()));
        }
        let x = ec2_call(endpoint, &region, &params).await?;
        let root = x
            .child("DescribeInstancesResponse")
            .ok_or("unexpected DescribeInstances answer")?;
        for res in root.items("reservationSet") {
            for inst in res.items("instancesSet") {
                states.push((
                    inst.text_at("instanceId"),
                    inst.text_at("instanceState/name"),
                ));
                let broken = state
                    .config
                    .broken_images
                    .contains(&inst.text_at("imageId"));
                if inst.text_at("instanceState/name") == "running" && !broken {
                    running.push(inst.clone());
                }
            }
        }
        token = Some(root.text_at("nextToken")).filter(|t| !t.is_empty());
        if token.is_none() {
            break;
        }
    }
    let mut nodes = Vec::new();
    for inst in &running {
        let id = inst.text_at("instanceId");
        let ty = inst.text_at("instanceType");
        if !types.contains_key(&ty) {
            if let Ok(t) = instance_type(endpoint, &region, &ty).await {
                types.insert(ty.clone(), t);
            }
        }
        if !user_data.contains_key(&id) {
            let a = ec2_call(
                endpoint,
                &region,
                &[
                    ("Action", "DescribeInstanceAttribute".into()),
                    ("InstanceId", id.clone()),
                    ("Attribute", "userData".into()),
                ],
            )
            .await?;
            let b64 = a
                .child("DescribeInstanceAttributeResponse")
                .map(|r| r.text_at("userData/value"))
                .unwrap_or_default();
            let text = base64_decode(&b64)
                .map(|b| String::from_utf8_lossy(&b).into_owned())
                .unwrap_or_default();
            user_data.insert(id.clone(), text);
        }
        nodes.push((
            id.clone(),
            node_for(
                inst,
                types.get(&ty),
                &user_data[&id],
                &region,
                &state.config.kubernetes_version,
            ),
        ));
    }
    let mut st = state.store.lock().unwrap();
    for (id, s) in states {
        if st.instances.record(&id, &s) {
            st.dirty = true;
        }
    }
    let Some(node_res) = st.registry.find("", "v1", "nodes").cloned() else {
        return Ok(());
    };
    let ids: Vec<String> = nodes.iter().map(|(id, _)| id.clone()).collect();
    for (_, node) in nodes {
        if st.get("/nodes", "", meta_str(&node, "name")).is_none() {
            let _ = api::create(&mut st, &node_res, "", node, &Query::default());
        }
    }
    let gone: Vec<String> = st
        .list("/nodes", None)
        .filter(|n| {
            n.pointer(&format!(
                "/metadata/annotations/{}",
                MANAGED.replace('/', "~1")
            ))
            .is_some()
        })
        .filter(|n| {
            let pid = n
                .pointer("/spec/providerID")
                .and_then(Value::as_str)
                .unwrap_or("");
            !ids.iter().any(|id| pid.ends_with(&format!("/{id}")))
        })
        .map(|n| meta_str(n, "name").to_string())
        .collect();
    for name in gone {
        let _ = api::delete(&mut st, &node_res, "", &name, &DeleteOpts::default());
    }
    drop(st);
    state.kick.notify_one();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_data_flags_of_each_family() {
        let al2 = "#!/bin/bash\n/etc/eks/bootstrap.sh 'c' --kubelet-extra-args '--node-labels=karpenter.sh/nodepool=default,team=a --register-with-taints=dedicated=gpu:NoSchedule --max-pods=58'\n";
        let r = parse_user_data(al2);
        assert_eq!(r.labels.get("team").map(String::as_str), Some("a"));
        assert_eq!(
            r.taints,
            vec![json!({"key": "dedicated", "value": "gpu", "effect": "NoSchedule"})]
        );
        assert_eq!(r.max_pods, Some(58));
        // As this tool (and Karpenter) write it: the values double-quoted.
        let quoted = "/etc/eks/bootstrap.sh 'c' --kubelet-extra-args '--node-labels=\"team=a,x=y\" --register-with-taints=\"d=g:NoSchedule\" --max-pods=29'";
        let r = parse_user_data(quoted);
        assert_eq!(r.labels.get("x").map(String::as_str), Some("y"));
        assert_eq!(r.taints.len(), 1);
        let al2023 = "apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  kubelet:\n    flags:\n    - --node-labels=karpenter.sh/nodepool=default\n";
        assert_eq!(parse_user_data(al2023).labels.len(), 1);
        // As Karpenter's nodeadm.go writes it: the taints in the kubelet config.
        let nodeadm = "  kubelet:\n    config:\n      maxPods: 110\n      registerWithTaints:\n      - effect: NoExecute\n        key: karpenter.sh/unregistered\n      - effect: NoSchedule\n        key: dedicated\n        value: gpu\n      systemReserved:\n        cpu: 100m\n    flags:\n    - --node-labels=\"team=a\"\n";
        let r = parse_user_data(nodeadm);
        assert_eq!(
            r.taints,
            vec![
                json!({"key": "karpenter.sh/unregistered", "effect": "NoExecute"}),
                json!({"key": "dedicated", "value": "gpu", "effect": "NoSchedule"})
            ]
        );
        assert_eq!(r.labels.get("team").map(String::as_str), Some("a"));
        assert_eq!(r.max_pods, Some(110));
        let br = "[settings.kubernetes.node-labels]\n\"karpenter.sh/nodepool\" = \"default\"\n[settings.kubernetes.node-taints]\n\"dedicated\" = [\"gpu:NoSchedule\"]\n";
        let r = parse_user_data(br);
        assert_eq!(
            r.labels.get("karpenter.sh/nodepool").map(String::as_str),
            Some("default")
        );
        assert_eq!(
            r.taints,
            vec![json!({"key": "dedicated", "value": "gpu", "effect": "NoSchedule"})]
        );
        assert_eq!(kube_reserved_cpu_millis(2), 70);
        assert_eq!(kube_reserved_cpu_millis(32), 150);
    }

    #[test]
    fn xml_items() {
        let x = Xml::parse("<?xml version=\"1.0\"?><R><set><item><id>a</id></item><item><id>b&amp;c</id></item></set></R>");
        let ids: Vec<String> = x
            .child("R")
            .unwrap()
            .items("set")
            .iter()
            .map(|i| i.text_at("id"))
            .collect();
        assert_eq!(ids, ["a", "b&c"]);
    }
}
