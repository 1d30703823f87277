//! One proxied request: read it from the client, draw its fault, then answer it ourselves, reset
//! the connection, or forward it to the peer and relay the answer.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::plan::{Fault, FaultPlan, Peer, Seen};
use super::Shared;

type Io<T> = std::io::Result<T>;

/// A request's head, taken apart, and its body.
struct Message {
    /// `GET /api/v1/nodes HTTP/1.1` (or the status line of an answer).
    start: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Message {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The head again, with `Connection: close` instead of whatever the sender asked for: one
    /// request per connection, so a reset or a late answer touches that request only.
    fn head_closing(&self) -> Vec<u8> {
        let mut head = format!("{}\r\n", self.start);
        for (name, value) in &self.headers {
            let hop = ["connection", "keep-alive", "proxy-connection"];
            if !hop.iter().any(|h| name.eq_ignore_ascii_case(h)) {
                head.push_str(&format!("{name}: {value}\r\n"));
            }
        }
        head.push_str("Connection: close\r\n\r\n");
        head.into_bytes()
    }
}

pub(super) async fn serve(
    mut client: TcpStream,
    upstream: SocketAddr,
    peer: Peer,
    shared: Arc<Mutex<Shared>>,
) -> Io<()> {
    let Some(request) = read_request(&mut client).await? else {
        return Ok(());
    };
    let mut words = request.start.split(' ');
    let method = words.next().unwrap_or_default().to_string();
    let target = words.next().unwrap_or_default().to_string();
    let path = target.split('?').next().unwrap_or_default().to_string();
    let action = action_of(&request);
    let fault = {
        let mut s = shared.lock().unwrap();
        s.requests += 1;
        let fault = s.plan.draw(&Seen {
            peer,
            method: &method,
            action: action.as_deref(),
        });
        if let Some(f) = fault {
            let what = format!("{method} {path} {}", action.as_deref().unwrap_or(""));
            s.injected.push((f, what.trim_end().to_string()));
        }
        fault
    };
    match fault {
        None => forward(&mut client, upstream, &request).await,
        Some(f @ Fault::Slow(_)) => {
            tokio::time::sleep(FaultPlan::delay(f).unwrap_or_default()).await;
            forward(&mut client, upstream, &request).await
        }
        Some(Fault::ResetBefore) => reset(client),
        Some(Fault::LostAnswer) => {
            let mut peer_conn = TcpStream::connect(upstream).await?;
            peer_conn.write_all(&request.head_closing()).await?;
            peer_conn.write_all(&request.body).await?;
            // The peer answers in full (the write took effect), the client never hears it.
            let mut answer = Vec::new();
            peer_conn.read_to_end(&mut answer).await?;
            reset(client)
        }
        Some(answer) => {
            let bytes = synthetic(peer, answer, &request, action.as_deref());
            client.write_all(&bytes).await?;
            client.shutdown().await
        }
    }
}

/// Closes with a TCP reset (SO_LINGER 0), as a crashed peer or a middlebox would.
fn reset(client: TcpStream) -> Io<()> {
    client.set_zero_linger()?;
    drop(client);
    Ok(())
}

/// Passes the request to the peer and its answer back (streamed: watches work).
async fn forward(client: &mut TcpStream, upstream: SocketAddr, request: &Message) -> Io<()> {
    let mut peer_conn = TcpStream::connect(upstream).await?;
    peer_conn.write_all(&request.head_closing()).await?;
    peer_conn.write_all(&request.body).await?;
    let (answer, rest) = read_head(&mut peer_conn).await?;
    let Some(answer) = answer else {
        // The peer closed without answering: so does the proxy.
        return Ok(());
    };
    client.write_all(&answer.head_closing()).await?;
    client.write_all(&rest).await?;
    // Asked to close, the peer ends the body by closing: copy until then.
    tokio::io::copy(&mut peer_conn, client).await?;
    client.shutdown().await
}

/// Reads a request and its `Content-Length` body; `None` when the client sent nothing.
async fn read_request(client: &mut TcpStream) -> Io<Option<Message>> {
    let (head, mut body) = read_head(client).await?;
    let Some(mut message) = head else {
        return Ok(None);
    };
    if message
        .header("transfer-encoding")
        .is_some_and(|t| t.contains("chunked"))
    {
        panic!(
            "fault proxy: chunked request bodies are not supported ({})",
            message.start
        );
    }
    let length: usize = message
        .header("content-length")
        .and_then(|l| l.trim().parse().ok())
        .unwrap_or(0);
    while body.len() < length {
        let mut chunk = [0u8; 16 * 1024];
        let n = client.read(&mut chunk).await?;
        if n == 0 {
            return Ok(None);
        }
        body.extend_from_slice(&chunk[..n]);
    }
    body.truncate(length);
    message.body = body;
    Ok(Some(message))
}

/// Reads up to the blank line ending a head; returns it parsed and the bytes read past it.
async fn read_head(stream: &mut TcpStream) -> Io<(Option<Message>, Vec<u8>)> {
    let mut buf = Vec::new();
    let end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i;
        }
        let mut chunk = [0u8; 16 * 1024];
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            return Ok((None, Vec::new()));
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..end]).into_owned();
    let rest = buf[end + 4..].to_vec();
    let mut lines = head.split("\r\n");
    let start = lines.next().unwrap_or_default().to_string();
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_string(), v.trim().to_string()))
        .collect();
    Ok((
        Some(Message {
            start,
            headers,
            body: Vec::new(),
        }),
        rest,
    ))
}

/// EC2's `Action=` from a Query-API form body, or SSM's operation from `X-Amz-Target`.
fn action_of(request: &Message) -> Option<String> {
    if let Some(target) = request.header("x-amz-target") {
        return target.rsplit('.').next().map(str::to_string);
    }
    form(&request.body)
        .into_iter()
        .find(|(k, _)| k == "Action")
        .map(|(_, v)| v)
}

/// A form body's pairs, percent-decoded (the loopback cluster's query parser: the same
/// encoding).
fn form(body: &[u8]) -> Vec<(String, String)> {
    crate::test_cluster::util::parse_query(&String::from_utf8_lossy(body))
}

/// The answer a faulty peer would give, byte for byte as its clients parse it.
fn synthetic(peer: Peer, fault: Fault, request: &Message, action: Option<&str>) -> Vec<u8> {
    let (status, content_type, extra, body) = match (peer, fault) {
        (Peer::Kubernetes, Fault::Throttle) => (
            429,
            "application/json",
            "Retry-After: 1\r\n",
            kube_status(429, "TooManyRequests", "the server has received too many requests and has asked us to try again later", 1),
        ),
        (Peer::Kubernetes, Fault::Conflict) => (
            409,
            "application/json",
            "",
            kube_status(409, "Conflict", "Operation cannot be fulfilled: the object has been modified; please apply your changes to the latest version and try again", 0),
        ),
        (Peer::Kubernetes, Fault::ServerError(code)) => (
            code,
            "application/json",
            "",
            kube_status(code, "InternalError", "an error on the server (\"injected\") has prevented the request from succeeding", 0),
        ),
        (Peer::Aws, Fault::InsufficientCapacity) => (
            200,
            "text/xml;charset=UTF-8",
            "",
            insufficient_capacity(&request.body),
        ),
        (Peer::Aws, Fault::Throttle) if action.is_some() && request.header("x-amz-target").is_some() => (
            400,
            "application/x-amz-json-1.1",
            "",
            r#"{"__type":"ThrottlingException","message":"Rate exceeded"}"#.to_string(),
        ),
        (Peer::Aws, Fault::Throttle) => (503, "text/xml;charset=UTF-8", "", ec2_error("RequestLimitExceeded", "Request limit exceeded.")),
        (Peer::Aws, Fault::ServerError(code)) if request.header("x-amz-target").is_some() => (
            code,
            "application/x-amz-json-1.1",
            "",
            r#"{"__type":"InternalServerError","message":"injected"}"#.to_string(),
        ),
        (Peer::Aws, Fault::ServerError(code)) => (code, "text/xml;charset=UTF-8", "", ec2_error(if code == 503 { "Unavailable" } else { "InternalError" }, "An internal error has occurred")),
        (peer, fault) => unreachable!("the plan never draws {fault:?} for {peer:?}"),
    };
    let reason = match status {
        200 => "OK",
        400 => "Bad Request",
        409 => "Conflict",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        _ => "Gateway Timeout",
    };
    format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n{extra}Connection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// A `metav1.Status` as the API server writes it.
fn kube_status(code: u16, reason: &str, message: &str, retry_after: u64) -> String {
    let mut status = serde_json::json!({
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": message, "reason": reason, "code": code,
    });
    if retry_after > 0 {
        status["details"] = serde_json::json!({"retryAfterSeconds": retry_after});
    }
    status.to_string()
}

/// EC2's Query-API error document.
fn ec2_error(code: &str, message: &str) -> String {
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Response><Errors><Error><Code>{code}</Code><Message>{message}</Message></Error></Errors><RequestID>00000000-fault-proxy</RequestID></Response>"
    )
}

/// CreateFleet (type `instant`) launching nothing: an `InsufficientInstanceCapacity` error per
/// override asked for, as EC2 answers when no pool has capacity.
fn insufficient_capacity(body: &[u8]) -> String {
    let pairs = form(body);
    let lifecycle = pairs
        .iter()
        .find(|(k, _)| k == "TargetCapacitySpecification.DefaultTargetCapacityType")
        .map_or("on-demand", |(_, v)| v.as_str());
    let mut errors = String::new();
    for (key, value) in &pairs {
        let Some(prefix) = key.strip_suffix(".InstanceType") else {
            continue;
        };
        let subnet = pairs
            .iter()
            .find(|(k, _)| *k == format!("{prefix}.SubnetId"))
            .map_or("", |(_, v)| v.as_str());
        errors.push_str(&format!(
            "<item><launchTemplateAndOverrides><overrides><instanceType>{value}</instanceType><subnetId>{subnet}</subnetId></overrides></launchTemplateAndOverrides><lifecycle>{lifecycle}</lifecycle><errorCode>InsufficientInstanceCapacity</errorCode><errorMessage>We currently do not have sufficient {value} capacity in the Availability Zone you requested.</errorMessage></item>"
        ));
    }
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<CreateFleetResponse xmlns=\"http://ec2.amazonaws.com/doc/2016-11-15/\"><requestId>00000000-fault-proxy</requestId><fleetId>fleet-00000000000000000</fleetId><errorSet>{errors}</errorSet><fleetInstanceSet/></CreateFleetResponse>"
    )
}
