//! A run's swimlanes as an SVG picture, for people who would rather look than read: one lane
//! per core, each kernel slice a bar coloured by its kernel (a legend names them), and the
//! slices of the critical path's chain outlined when the trace carries its dependencies.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::fmt::Write as _;

use serde_json::Value;

use crate::read::RunTrace;
use crate::summary::SummaryError;

/// Width of the time axis, in px.
const PLOT: f64 = 1200.0;
/// Left margin (the lanes' names), top margin (the title) and a lane's height, in px.
const LEFT: f64 = 80.0;
const TOP: f64 = 28.0;
const LANE: f64 = 14.0;
/// Kernel colours, repeating past the last.
const PALETTE: [&str; 12] = [
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
    "#9c755f", "#bab0ac", "#86bcb6", "#d37295",
];

/// The swimlane picture of the run `trace` (a Chrome trace this crate wrote, held as JSON)
/// shows; see [`RunTrace::swimlane_svg`].
pub fn swimlane_svg(trace: &Value) -> Result<String, SummaryError> {
    Ok(RunTrace::from_value(trace)?.swimlane_svg())
}

impl RunTrace {
    /// The swimlane picture of the run.
    pub fn swimlane_svg(&self) -> String {
        draw(self)
    }
}

fn draw(run: &RunTrace) -> String {
    let slices = &run.slices;
    let critical: HashSet<u64> = run
        .summary()
        .critical_path
        .map(|p| p.chain.iter().map(|t| t.id).collect())
        .unwrap_or_default();
    let t0 = slices.iter().map(|s| s.start).min().unwrap_or(0);
    let span = slices
        .iter()
        .map(|s| s.end)
        .max()
        .unwrap_or(0)
        .saturating_sub(t0)
        .max(1);
    let x = |t: u64| LEFT + PLOT * (t - t0) as f64 / span as f64;
    let cores: BTreeSet<u32> = slices.iter().map(|s| s.core).collect();
    let lane: BTreeMap<u32, usize> = cores.iter().enumerate().map(|(i, &c)| (c, i)).collect();
    let kernels: BTreeSet<&str> = slices.iter().map(|s| s.name.as_str()).collect();
    let colour: BTreeMap<&str, &str> = kernels
        .iter()
        .enumerate()
        .map(|(i, &k)| (k, PALETTE[i % PALETTE.len()]))
        .collect();
    let legend_top = TOP + LANE * cores.len() as f64 + 16.0;
    let height = legend_top + 16.0 * kernels.len() as f64 + 8.0;
    let width = LEFT + PLOT + 20.0;
    let mut svg = String::new();
    let _ = writeln!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="11">"#
    );
    let _ = writeln!(
        svg,
        r#"<text x="{LEFT}" y="16">{} kernel slices on {} cores over {:.3} µs{}</text>"#,
        slices.len(),
        cores.len(),
        span as f64 / 1000.0,
        if critical.is_empty() {
            ""
        } else {
            "; the critical path's chain outlined"
        }
    );
    for (&core, &i) in &lane {
        let y = TOP + LANE * i as f64;
        let _ = writeln!(
            svg,
            r#"<g class="lane" data-core="{core}"><text x="4" y="{:.1}">core {core}</text>"#,
            y + LANE - 3.0
        );
        for s in slices.iter().filter(|s| s.core == core) {
            let on_path = s.id.is_some_and(|id| critical.contains(&id));
            let _ = writeln!(
                svg,
                r#"<rect x="{:.2}" y="{:.1}" width="{:.2}" height="{:.1}" fill="{}"{}><title>{} ({:.3} to {:.3} µs)</title></rect>"#,
                x(s.start),
                y + 1.0,
                (x(s.end) - x(s.start)).max(0.5),
                LANE - 2.0,
                colour[s.name.as_str()],
                if on_path {
                    r#" stroke="black" stroke-width="1.5" class="critical""#
                } else {
                    ""
                },
                escape(&s.name),
                (s.start - t0) as f64 / 1000.0,
                (s.end - t0) as f64 / 1000.0,
            );
        }
        svg.push_str("</g>\n");
    }
    for (i, (k, c)) in colour.iter().enumerate() {
        let y = legend_top + 16.0 * i as f64;
        let _ = writeln!(
            svg,
            r#"<rect x="{LEFT}" y="{y:.1}" width="12" height="12" fill="{c}"/><text x="{:.1}" y="{:.1}">{}</text>"#,
            LEFT + 18.0,
            y + 10.0,
            escape(k)
        );
    }
    svg.push_str("</svg>\n");
    svg
}

/// `s` as XML text.
fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use pto_runtime_core::{CoreId, KernelId, TaskId, TaskRecord, WorkerClass};

    use super::*;
    use crate::{add_dependencies, chrome_trace};

    fn rec(n: u64, core: u16, start: u64, end: u64) -> TaskRecord {
        TaskRecord {
            task: TaskId::from_raw(n),
            kernel: KernelId(n as u32 % 2),
            class: WorkerClass::Aiv,
            core: Some(CoreId(core)),
            scheduler: 0,
            submit: 1,
            ready: 1,
            dispatch: start - 1,
            start,
            end,
            fin: end + 1,
            deferred_done: 0,
            complete: end + 2,
            cancelled: false,
            skipped: false,
            block: 0,
            blocks: 1,
        }
    }

    #[test]
    fn one_lane_per_core_a_bar_per_slice_and_the_chain_outlined() {
        let recs = [rec(1, 0, 10, 20), rec(2, 3, 20, 40), rec(3, 0, 40, 45)];
        let mut t = chrome_trace(&recs, 1);
        let tasks = [
            (recs[0].task, vec![]),
            (recs[1].task, vec![recs[0].task]),
            (recs[2].task, vec![recs[1].task]),
        ];
        add_dependencies(&mut t, &tasks, (0, 4));
        let svg = swimlane_svg(&t).unwrap();
        let doc = roxmltree::Document::parse(&svg).expect("well-formed XML");
        let lanes: Vec<_> = doc
            .descendants()
            .filter(|n| n.attribute("class") == Some("lane"))
            .map(|n| n.attribute("data-core").unwrap().to_owned())
            .collect();
        assert_eq!(lanes, ["0", "3"], "a lane per core that ran a slice");
        let bars = doc
            .descendants()
            .filter(|n| n.has_tag_name("rect") && n.children().any(|c| c.has_tag_name("title")))
            .count();
        assert_eq!(bars, 3);
        let critical = doc
            .descendants()
            .filter(|n| n.attribute("class") == Some("critical"))
            .count();
        assert_eq!(critical, 3, "the chain runs through all three");
        assert!(
            svg.contains("kernel 0") && svg.contains("kernel 1"),
            "{svg}"
        );
    }

    #[test]
    fn names_are_escaped() {
        assert_eq!(escape("a<b>&\"c\""), "a&lt;b&gt;&amp;&quot;c&quot;");
    }
}
