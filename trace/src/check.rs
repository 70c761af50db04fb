//! Checks that a Chrome trace is one Perfetto can draw: every event has the fields the
//! format requires for its phase, complete slices on each track are well nested, and every
//! async slice that begins also ends.

use std::collections::BTreeMap;

use serde_json::Value;

/// What is wrong with a trace.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TraceDefect {
    /// The JSON is not an object with a `traceEvents` array.
    #[error("not a Chrome trace: no traceEvents array")]
    NotATrace,
    /// Event `index` lacks `field` (or it has the wrong type) for its phase.
    #[error("event {index} ({event}) lacks a valid `{field}`")]
    Field {
        /// The event's index in `traceEvents`.
        index: usize,
        /// The field.
        field: &'static str,
        /// The event, as JSON.
        event: String,
    },
    /// Two slices of one track overlap without one holding the other.
    #[error(
        "on track pid {pid} tid {tid}, `{second}` starts at {start_ns} ns inside `{first}` but \
         ends after it"
    )]
    Overlap {
        /// The track's process.
        pid: u64,
        /// The track's thread.
        tid: u64,
        /// The slice already open.
        first: String,
        /// The slice that starts inside it and ends after it.
        second: String,
        /// Where the second one starts.
        start_ns: u64,
    },
    /// An async slice begins and never ends, ends without beginning, or ends before it
    /// begins.
    #[error("async slice `{name}` ({cat} {id}) is unmatched: {why}")]
    Unmatched {
        /// Its category.
        cat: String,
        /// Its id.
        id: String,
        /// Its name.
        name: String,
        /// What is wrong.
        why: &'static str,
    },
}

/// A complete slice on a track: start and end in ns, and its name.
type Span = (u64, u64, String);

/// Checks `trace` (see the module docs); `Ok` if Perfetto can draw every track.
pub fn check_chrome_trace(trace: &Value) -> Result<(), TraceDefect> {
    let events = trace["traceEvents"]
        .as_array()
        .ok_or(TraceDefect::NotATrace)?;
    let mut tracks: BTreeMap<(u64, u64), Vec<Span>> = BTreeMap::new();
    let mut open: BTreeMap<(u64, String, String), (String, u64)> = BTreeMap::new();
    for (index, e) in events.iter().enumerate() {
        let need = |field: &'static str, ok: bool| {
            if ok {
                Ok(())
            } else {
                Err(TraceDefect::Field {
                    index,
                    field,
                    event: e.to_string(),
                })
            }
        };
        let ph = e["ph"].as_str().unwrap_or("");
        need(
            "ph",
            matches!(ph, "X" | "B" | "E" | "b" | "e" | "n" | "i" | "M"),
        )?;
        need("name", e["name"].is_string())?;
        need("pid", e["pid"].is_u64())?;
        if ph == "M" {
            need("args", e["args"]["name"].is_string())?;
            continue;
        }
        need("tid", e["tid"].is_u64())?;
        let ts = e["ts"].as_f64().filter(|t| *t >= 0.0);
        need("ts", ts.is_some())?;
        let ts = ns(ts.unwrap_or(0.0));
        let (pid, tid) = (
            e["pid"].as_u64().unwrap_or(0),
            e["tid"].as_u64().unwrap_or(0),
        );
        let name = e["name"].as_str().unwrap_or("").to_string();
        match ph {
            "X" => {
                let dur = e["dur"].as_f64().filter(|d| *d >= 0.0);
                need("dur", dur.is_some())?;
                let end = ts + ns(dur.unwrap_or(0.0));
                tracks.entry((pid, tid)).or_default().push((ts, end, name));
            }
            "b" | "e" => {
                need("cat", e["cat"].is_string())?;
                need("id", e["id"].is_string() || e["id"].is_u64())?;
                let key = (pid, e["cat"].to_string(), e["id"].to_string());
                let unmatched = |why| TraceDefect::Unmatched {
                    cat: key.1.clone(),
                    id: key.2.clone(),
                    name: name.clone(),
                    why,
                };
                if ph == "b" {
                    if open.insert(key.clone(), (name.clone(), ts)).is_some() {
                        return Err(unmatched("it begins twice"));
                    }
                } else {
                    match open.remove(&key) {
                        None => return Err(unmatched("it ends without beginning")),
                        Some((_, begun)) if begun > ts => {
                            return Err(unmatched("it ends before it begins"));
                        }
                        Some(_) => {}
                    }
                }
            }
            _ => {}
        }
    }
    if let Some(((_, cat, id), (name, _))) = open.into_iter().next() {
        return Err(TraceDefect::Unmatched {
            cat,
            id,
            name,
            why: "it never ends",
        });
    }
    for ((pid, tid), mut slices) in tracks {
        slices.sort_by_key(|&(start, end, _)| (start, std::cmp::Reverse(end)));
        let mut stack: Vec<(u64, String)> = Vec::new();
        for (start, end, name) in slices {
            while stack.last().is_some_and(|(e, _)| *e <= start) {
                stack.pop();
            }
            if let Some((outer_end, outer)) = stack.last()
                && end > *outer_end
            {
                return Err(TraceDefect::Overlap {
                    pid,
                    tid,
                    first: outer.clone(),
                    second: name,
                    start_ns: start,
                });
            }
            stack.push((end, name));
        }
    }
    Ok(())
}

/// A trace time in µs as whole nanoseconds, rounded as a reader rounds it.
fn ns(us: f64) -> u64 {
    (us * 1000.0).round() as u64
}
