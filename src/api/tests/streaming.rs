//! Objects normalised as they are read (`build.rs`, `load_paths`) give what normalising the
//! whole input at once gave: the same manifests, and the same first error.

use super::super::{load_paths, read_objects, read_str};
use super::*;

fn pod(name: &str, extra: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}}}\nspec:\n  {extra}containers: [{{name: a, resources: {{requests: {{cpu: 1}}}}}}]\n"
    )
}

const SANDBOX: &str = "apiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata: {name: gvisor}\nhandler: runsc\noverhead: {podFixed: {cpu: 250m}}\n";
const BAD_SANDBOX: &str = "apiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata: {name: gvisor}\nhandler: runsc\noverhead: {podFixed: {cpu: lots}}\n";

fn load(docs: &[String]) -> Result<Manifests, String> {
    load_str("in.yaml", &docs.join("---\n")).map_err(|e| e.to_string())
}

#[test]
fn a_runtime_class_read_after_its_pods_still_adds_its_overhead() {
    let m = load(&[
        pod("first", "runtimeClassName: gvisor\n  "),
        pod("plain", ""),
        SANDBOX.to_string(),
    ])
    .unwrap();
    let cpu: Vec<_> = m
        .pods
        .iter()
        .map(|p| (p.name.clone(), p.requests.cpu))
        .collect();
    assert_eq!(
        cpu,
        [("first".into(), 1250), ("plain".into(), 1000)],
        "input order kept"
    );
}

#[test]
fn the_first_error_is_the_whole_inputs() {
    let bad_pod = pod("bad", "").replace("cpu: 1", "cpu: lots");
    // A duplicate anywhere beats an invalid object before it.
    let e = load(&[bad_pod.clone(), pod("p", ""), pod("p", "")]).unwrap_err();
    assert!(e.contains("Pod/p: defined twice"), "{e}");
    // An invalid RuntimeClass anywhere beats another invalid object before it.
    let e = load(&[bad_pod.clone(), BAD_SANDBOX.to_string()]).unwrap_err();
    assert!(e.contains("RuntimeClass/gvisor"), "{e}");
    // Otherwise the first invalid object in input order, waiting pods included.
    let e = load(&[
        pod("waits", "runtimeClassName: gvisor\n  ").replace("cpu: 1", "cpu: lots"),
        bad_pod,
        SANDBOX.to_string(),
    ])
    .unwrap_err();
    assert!(e.contains("Pod/waits"), "{e}");
}

#[test]
fn reading_files_object_by_object_gives_the_same_manifests() {
    let dir = std::env::temp_dir().join(format!("kk-streaming-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let yaml = [
        pod("a", "nodeName: n1\n  "),
        pod("b", ""),
        SANDBOX.to_string(),
    ]
    .join("---\n");
    let json_stream = "---\n{\"apiVersion\": \"v1\", \"kind\": \"Node\", \"metadata\": {\"name\": \"n1\"}}\n---\n{\"apiVersion\": \"v1\", \"kind\": \"Pod\", \"metadata\": {\"name\": \"c\"}, \"spec\": {\"runtimeClassName\": \"gvisor\", \"containers\": [{\"name\": \"a\"}]}}\n";
    let list = r#"{"apiVersion": "v1", "kind": "List", "items": [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns", "labels": {"a": "b"}}}]}"#;
    let mut paths = Vec::new();
    for (name, text) in [
        ("1.yaml", yaml.as_str()),
        ("2.json", json_stream),
        ("3.json", list),
    ] {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        paths.push(path.display().to_string());
    }
    let streamed = load_paths(&paths, &mut std::io::empty()).unwrap();
    let whole =
        Manifests::from_objects(read_objects(&paths, &mut std::io::empty()).unwrap()).unwrap();
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(streamed, whole);
    assert_eq!(streamed.pods.len(), 2);
    assert_eq!(
        streamed.pods[1].requests.cpu, 250,
        "the class from another file"
    );
}

#[test]
fn a_json_input_of_only_null_holds_no_object() {
    let e = read_str("n.json", "null\n").unwrap_err().to_string();
    assert!(e.contains("no Kubernetes objects found"), "{e}");
}
