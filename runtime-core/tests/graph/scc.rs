//! Strongly connected components (Tarjan): the module sets that import each other in a circle.

use std::collections::{BTreeMap, BTreeSet};

/// Every set of two or more nodes that reach each other along `edges`, smallest node first.
pub fn cycles(edges: &BTreeSet<(String, String)>) -> Vec<Vec<String>> {
    let mut next: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (a, b) in edges {
        next.entry(a).or_default().push(b);
        next.entry(b).or_default();
    }
    let mut t = Tarjan {
        next: &next,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
    };
    for &n in next.keys() {
        if !t.index.contains_key(n) {
            t.visit(n);
        }
    }
    let mut out: Vec<Vec<String>> = t.out.into_iter().filter(|c| c.len() > 1).collect();
    for c in &mut out {
        c.sort();
    }
    out.sort();
    out
}

/// Tarjan's walk state.
struct Tarjan<'a> {
    next: &'a BTreeMap<&'a str, Vec<&'a str>>,
    index: BTreeMap<&'a str, usize>,
    low: BTreeMap<&'a str, usize>,
    stack: Vec<&'a str>,
    on: BTreeSet<&'a str>,
    out: Vec<Vec<String>>,
}

impl<'a> Tarjan<'a> {
    fn visit(&mut self, n: &'a str) {
        let i = self.index.len();
        self.index.insert(n, i);
        self.low.insert(n, i);
        self.stack.push(n);
        self.on.insert(n);
        for &m in &self.next[n] {
            if !self.index.contains_key(m) {
                self.visit(m);
                let low = self.low[n].min(self.low[m]);
                self.low.insert(n, low);
            } else if self.on.contains(m) {
                let low = self.low[n].min(self.index[m]);
                self.low.insert(n, low);
            }
        }
        if self.low[n] == self.index[n] {
            let mut component = Vec::new();
            while let Some(m) = self.stack.pop() {
                self.on.remove(m);
                component.push(m.to_string());
                if m == n {
                    break;
                }
            }
            self.out.push(component);
        }
    }
}
