//! Sequitur with repetition exponents (Nevill-Manning & Witten 1997; Pilgrim `000_*` §2.2).
//!
//! The builder grows a context-free grammar that generates exactly the terminals appended so far,
//! keeping three properties true after every [`Sequitur::push`]:
//!
//! - **P1, digram uniqueness**: no pair of adjacent symbols (a digram, keyed by both symbol ids
//!   *and* both exponents) occurs twice in the grammar.
//! - **P2, rule utility**: every rule but the root is referenced by at least two symbols, or by
//!   one symbol with an exponent of at least 2 (`A → B^k`, Pilgrim §2.2).
//! - **Twins**: no two adjacent symbols carry the same id; `a^i a^j` is always stored as
//!   `a^(i+j)`. A loop `a^n` is therefore one symbol, and `(a b)^n` is `S → R^n, R → a b`: O(1)
//!   symbols whatever n. Because twins never stay adjacent, the classic overlapping-triples case
//!   (`abbbabcbb`, `aaaa`: a digram overlapping its own copy) cannot arise.
//!
//! # Data layout
//! Symbols live in an index-addressed arena (`Vec<Node>` with a free list): each rule body is a
//! circular doubly linked list through a guard node, as in the original `classes.h`. The digram
//! index maps the exact key `(id, exp, id, exp)` to the left node of the digram's one recorded
//! occurrence; no hashing of the key to a narrower value, so no collision can merge two digrams.
//!
//! # Algorithm
//! Every edit that creates a new adjacency pushes the left node of that adjacency on a pending
//! stack; [`Sequitur::push`] drains it. Checking a node either merges twins, records a new
//! digram, or finds an earlier non-overlapping occurrence and replaces both by a rule (reusing a
//! rule whose whole body is that digram). Before any node's successor or exponent changes, the
//! index entries pointing at it are removed, so the index only ever points at live occurrences
//! of their key. When a substitution drops a rule to one reference, that reference is inside
//! the new (or reused) rule's two-symbol body: those two symbols are the only ones inspected
//! for P2, which keeps each step amortised O(1) as in the original.

use rustc_hash::FxHashMap;

/// A symbol of the builder: a terminal value, a reference to a rule, or a rule's guard node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Sym {
    Terminal(u64),
    Rule(u32),
    Guard(u32),
}

type NodeId = u32;

#[derive(Debug, Clone, Copy)]
struct Node {
    sym: Sym,
    /// Repetition exponent, >= 1.
    exp: u64,
    prev: NodeId,
    next: NodeId,
    live: bool,
}

#[derive(Debug, Clone, Copy)]
struct RuleSlot {
    guard: NodeId,
    /// Symbols referencing this rule (each counts once whatever its exponent).
    refs: u32,
    live: bool,
}

/// Exact digram key: both symbols and both exponents.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct DigramKey {
    a: Sym,
    a_exp: u64,
    b: Sym,
    b_exp: u64,
}

/// The root rule's id.
const ROOT: u32 = 0;

/// Online grammar builder. Append terminals with [`Sequitur::push`], then [`Sequitur::finish`].
#[derive(Debug, Clone)]
pub struct Sequitur {
    nodes: Vec<Node>,
    free_nodes: Vec<NodeId>,
    rules: Vec<RuleSlot>,
    free_rules: Vec<u32>,
    digrams: FxHashMap<DigramKey, NodeId>,
    pending: Vec<NodeId>,
    terminals: u64,
}

impl Default for Sequitur {
    fn default() -> Self {
        Self::new()
    }
}

impl Sequitur {
    /// An empty grammar (root rule with an empty body).
    pub fn new() -> Self {
        let mut s = Sequitur {
            nodes: Vec::new(),
            free_nodes: Vec::new(),
            rules: Vec::new(),
            free_rules: Vec::new(),
            digrams: FxHashMap::default(),
            pending: Vec::new(),
            terminals: 0,
        };
        let root = s.new_rule();
        debug_assert_eq!(root, ROOT);
        s
    }

    /// Number of terminals appended so far.
    pub fn terminal_count(&self) -> u64 {
        self.terminals
    }

    /// Live symbols in all rule bodies (guards excluded): the grammar's size.
    pub fn symbol_count(&self) -> usize {
        self.nodes
            .iter()
            .filter(|n| n.live && !matches!(n.sym, Sym::Guard(_)))
            .count()
    }

    /// Arena slots ever allocated (live or on the free list): the builder's memory in nodes.
    pub fn arena_len(&self) -> usize {
        self.nodes.len()
    }

    /// Live rules, the root included.
    pub fn rule_count(&self) -> usize {
        self.rules.iter().filter(|r| r.live).count()
    }

    /// Appends one terminal. Amortised O(1) (Nevill-Manning & Witten 1997, §4).
    pub fn push(&mut self, terminal: u64) {
        self.push_run(terminal, 1);
    }

    /// Appends `terminal` `count` times in one step (`count` >= 1; 0 is ignored).
    pub fn push_run(&mut self, terminal: u64, count: u64) {
        if count == 0 {
            return;
        }
        self.terminals += count;
        let guard = self.rules[ROOT as usize].guard;
        let last = self.nodes[guard as usize].prev;
        let n = self.alloc(Sym::Terminal(terminal), count);
        self.link(last, n);
        self.link(n, guard);
        self.pending.push(last);
        self.run();
    }

    fn new_rule(&mut self) -> u32 {
        let id = match self.free_rules.pop() {
            Some(id) => id,
            None => {
                self.rules.push(RuleSlot {
                    guard: 0,
                    refs: 0,
                    live: false,
                });
                (self.rules.len() - 1) as u32
            }
        };
        let g = self.alloc(Sym::Guard(id), 1);
        self.link(g, g);
        self.rules[id as usize] = RuleSlot {
            guard: g,
            refs: 0,
            live: true,
        };
        id
    }

    fn alloc(&mut self, sym: Sym, exp: u64) -> NodeId {
        if let Sym::Rule(r) = sym {
            self.rules[r as usize].refs += 1;
        }
        let node = Node {
            sym,
            exp,
            prev: 0,
            next: 0,
            live: true,
        };
        match self.free_nodes.pop() {
            Some(id) => {
                self.nodes[id as usize] = node;
                id
            }
            None => {
                self.nodes.push(node);
                (self.nodes.len() - 1) as NodeId
            }
        }
    }

    fn free(&mut self, n: NodeId) {
        let node = &mut self.nodes[n as usize];
        node.live = false;
        if let Sym::Rule(r) = node.sym {
            self.rules[r as usize].refs -= 1;
        }
        self.free_nodes.push(n);
    }

    fn link(&mut self, a: NodeId, b: NodeId) {
        self.nodes[a as usize].next = b;
        self.nodes[b as usize].prev = a;
    }

    fn next(&self, n: NodeId) -> NodeId {
        self.nodes[n as usize].next
    }

    fn prev(&self, n: NodeId) -> NodeId {
        self.nodes[n as usize].prev
    }

    fn is_guard(&self, n: NodeId) -> bool {
        matches!(self.nodes[n as usize].sym, Sym::Guard(_))
    }

    /// Key of the digram starting at `n`, if `n` and its successor are both symbols.
    fn key(&self, n: NodeId) -> Option<DigramKey> {
        let a = &self.nodes[n as usize];
        let b = &self.nodes[a.next as usize];
        if matches!(a.sym, Sym::Guard(_)) || matches!(b.sym, Sym::Guard(_)) {
            return None;
        }
        Some(DigramKey {
            a: a.sym,
            a_exp: a.exp,
            b: b.sym,
            b_exp: b.exp,
        })
    }

    /// Forgets the index entry of the digram starting at `n` if the entry points at `n`.
    fn unindex(&mut self, n: NodeId) {
        if let Some(k) = self.key(n) {
            if self.digrams.get(&k) == Some(&n) {
                self.digrams.remove(&k);
            }
        }
    }

    fn run(&mut self) {
        while let Some(n) = self.pending.pop() {
            self.check(n);
        }
    }

    /// Restores P1 and twins for the adjacency starting at `n`.
    fn check(&mut self, n: NodeId) {
        if !self.nodes[n as usize].live || self.is_guard(n) {
            return;
        }
        let m = self.next(n);
        if self.is_guard(m) {
            return;
        }
        if self.nodes[n as usize].sym == self.nodes[m as usize].sym {
            // Twins: a^i a^j → a^(i+j). The survivor keeps a reference with exponent >= 2, so
            // P2 still holds for a rule symbol.
            let p = self.prev(n);
            self.unindex(p);
            self.unindex(n);
            self.unindex(m);
            let add = self.nodes[m as usize].exp;
            let e = &mut self.nodes[n as usize].exp;
            *e = e.saturating_add(add);
            let after = self.next(m);
            self.link(n, after);
            self.free(m);
            self.pending.push(p);
            self.pending.push(n);
            return;
        }
        let Some(k) = self.key(n) else { return };
        match self.digrams.get(&k) {
            None => {
                self.digrams.insert(k, n);
            }
            Some(&o) if o == n => {}
            Some(&o) => {
                // Overlap needs equal adjacent symbols, which twins merging forbids.
                if self.next(o) == n || self.next(n) == o {
                    return;
                }
                self.on_match(n, o);
            }
        }
    }

    /// The non-root rule whose whole body is the digram starting at `n`, if any.
    fn whole_rule(&self, n: NodeId) -> Option<u32> {
        let p = self.prev(n);
        let after = self.next(self.next(n));
        match (self.nodes[p as usize].sym, self.is_guard(after)) {
            (Sym::Guard(r), true) if r != ROOT => Some(r),
            _ => None,
        }
    }

    /// `n` (new) and `o` (recorded) are non-overlapping occurrences of one digram.
    fn on_match(&mut self, n: NodeId, o: NodeId) {
        let rule = if let Some(r) = self.whole_rule(o) {
            self.substitute(n, r);
            r
        } else if let Some(r) = self.whole_rule(n) {
            self.substitute(o, r);
            r
        } else {
            let r = self.new_rule();
            let (na, nb) = (self.nodes[n as usize], self.nodes[self.next(n) as usize]);
            let a = self.alloc(na.sym, na.exp);
            let b = self.alloc(nb.sym, nb.exp);
            let g = self.rules[r as usize].guard;
            self.link(g, a);
            self.link(a, b);
            self.link(b, g);
            self.substitute(o, r);
            self.substitute(n, r);
            let k = self.key(a).expect("two-symbol body");
            self.digrams.insert(k, a);
            r
        };
        // P2: a rule that lost a reference to the substitution and has one left is referenced
        // from `rule`'s two-symbol body (see the module docs).
        let g = self.rules[rule as usize].guard;
        let first = self.next(g);
        let second = self.next(first);
        for x in [first, second] {
            if x == g || !self.nodes[x as usize].live {
                continue;
            }
            let node = self.nodes[x as usize];
            if let Sym::Rule(q) = node.sym {
                if node.exp == 1 && self.rules[q as usize].refs == 1 {
                    self.expand(x);
                }
            }
        }
    }

    /// Replaces the digram starting at `n` by one reference to rule `r`.
    fn substitute(&mut self, n: NodeId, r: u32) {
        let p = self.prev(n);
        let m = self.next(n);
        let after = self.next(m);
        self.unindex(p);
        self.unindex(n);
        self.unindex(m);
        self.free(n);
        self.free(m);
        let x = self.alloc(Sym::Rule(r), 1);
        self.link(p, x);
        self.link(x, after);
        self.pending.push(p);
        self.pending.push(x);
    }

    /// Splices the body of the rule referenced (once, exponent 1) by `x` in place of `x`.
    fn expand(&mut self, x: NodeId) {
        let Sym::Rule(q) = self.nodes[x as usize].sym else {
            unreachable!("expand of a terminal")
        };
        let g = self.rules[q as usize].guard;
        let (first, last) = (self.next(g), self.prev(g));
        let (p, after) = (self.prev(x), self.next(x));
        self.unindex(p);
        self.unindex(x);
        // The body's own digrams keep their index entries: the nodes move, their pairs do not.
        self.link(p, first);
        self.link(last, after);
        self.free(x);
        self.nodes[g as usize].live = false;
        self.free_nodes.push(g);
        self.rules[q as usize].live = false;
        self.free_rules.push(q);
        self.pending.push(p);
        self.pending.push(last);
    }

    /// Checks P1, P2, twins, reference counts and the digram index against the grammar.
    ///
    /// # Errors
    /// A description of the first violated property.
    pub fn validate(&self) -> Result<(), String> {
        if !self.pending.is_empty() {
            return Err("pending checks left".into());
        }
        let mut refs = vec![0u32; self.rules.len()];
        let mut single_exp = vec![0u64; self.rules.len()];
        let mut seen: FxHashMap<DigramKey, NodeId> = FxHashMap::default();
        for (r, slot) in self.rules.iter().enumerate() {
            if !slot.live {
                continue;
            }
            let g = slot.guard;
            if self.nodes[g as usize].sym != Sym::Guard(r as u32) {
                return Err(format!("rule {r}: guard mismatch"));
            }
            if self.next(g) == g && r as u32 != ROOT {
                return Err(format!("rule {r}: empty body"));
            }
            let mut n = self.next(g);
            let mut steps = 0usize;
            while n != g {
                steps += 1;
                if steps > self.nodes.len() {
                    return Err(format!("rule {r}: body is not a cycle through its guard"));
                }
                let node = self.nodes[n as usize];
                if !node.live || node.exp == 0 || self.prev(node.next) != n {
                    return Err(format!("rule {r}: broken node {n}"));
                }
                if let Sym::Rule(q) = node.sym {
                    if !self.rules[q as usize].live {
                        return Err(format!("rule {r} references dead rule {q}"));
                    }
                    refs[q as usize] += 1;
                    single_exp[q as usize] = node.exp;
                }
                if let Some(k) = self.key(n) {
                    if k.a == k.b {
                        return Err(format!("rule {r}: adjacent twins {:?}", k.a));
                    }
                    if let Some(other) = seen.insert(k, n) {
                        return Err(format!(
                            "digram {k:?} occurs twice (nodes {other} and {n}): P1 violated"
                        ));
                    }
                    if self.digrams.get(&k) != Some(&n) {
                        return Err(format!("digram {k:?} at node {n} is not indexed"));
                    }
                }
                n = node.next;
            }
        }
        if seen.len() != self.digrams.len() {
            return Err(format!(
                "index holds {} digrams, grammar has {}",
                self.digrams.len(),
                seen.len()
            ));
        }
        for (r, slot) in self.rules.iter().enumerate() {
            if !slot.live || r as u32 == ROOT {
                continue;
            }
            if refs[r] != slot.refs {
                return Err(format!(
                    "rule {r}: {} references counted, {} recorded",
                    refs[r], slot.refs
                ));
            }
            if refs[r] == 0 || (refs[r] == 1 && single_exp[r] < 2) {
                return Err(format!(
                    "rule {r} is used once with exponent 1: P2 violated"
                ));
            }
        }
        Ok(())
    }

    /// Freezes the grammar, numbering rules canonically: the root is rule 0, the others in
    /// breadth-first order of first reference. Equal inputs give equal grammars.
    pub fn finish(&self) -> crate::grammar::Grammar {
        use crate::grammar::Symbol;
        let mut number = vec![u32::MAX; self.rules.len()];
        number[ROOT as usize] = 0;
        let mut order = vec![ROOT];
        let mut bodies = Vec::new();
        let mut starts = vec![0u32];
        let mut i = 0;
        while i < order.len() {
            let g = self.rules[order[i] as usize].guard;
            let mut n = self.next(g);
            while n != g {
                let node = self.nodes[n as usize];
                let sym = match node.sym {
                    Sym::Terminal(t) => Symbol::Terminal(t),
                    Sym::Rule(q) => {
                        if number[q as usize] == u32::MAX {
                            number[q as usize] = order.len() as u32;
                            order.push(q);
                        }
                        Symbol::Rule(number[q as usize])
                    }
                    Sym::Guard(_) => unreachable!("guard inside a body"),
                };
                bodies.push((sym, node.exp));
                n = node.next;
            }
            starts.push(bodies.len() as u32);
            i += 1;
        }
        crate::grammar::Grammar::from_parts(bodies, starts)
            .expect("Sequitur output is a well-formed grammar")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn build(s: &[u64]) -> Sequitur {
        let mut q = Sequitur::new();
        for &t in s {
            q.push(t);
            q.validate().unwrap();
        }
        q
    }

    fn chars(s: &str) -> Vec<u64> {
        s.bytes().map(u64::from).collect()
    }

    #[test]
    fn loops_take_constant_space() {
        // a^n: one symbol whatever n.
        let q = build(&vec![7; 1000]);
        assert_eq!((q.symbol_count(), q.rule_count()), (1, 1));
        // (a b)^n: S → R^n, R → a b: three symbols, two rules.
        let q = build(&chars(&"ab".repeat(500)));
        assert_eq!((q.symbol_count(), q.rule_count()), (3, 2));
        // (a b c)^n: S → R^n, R → a b c.
        let q = build(&chars(&"abc".repeat(333)));
        assert_eq!((q.symbol_count(), q.rule_count()), (4, 2));
    }

    #[test]
    fn loop_memory_is_bounded() {
        // Appending a^n, (a b)^n or (a b c)^n never needs more than a handful of arena slots:
        // freed slots are reused.
        for pattern in [&[1u64][..], &[1, 2], &[1, 2, 3]] {
            let mut q = Sequitur::new();
            for _ in 0..100_000 {
                for &t in pattern {
                    q.push(t);
                }
            }
            assert!(q.arena_len() <= 12, "{pattern:?}: {} slots", q.arena_len());
            assert_eq!(q.terminal_count(), 100_000 * pattern.len() as u64);
        }
    }

    #[test]
    fn overlapping_triples() {
        // abbbabcbb → a b^3 a b c b^2: no digram repeats, so no rule.
        let q = build(&chars("abbbabcbb"));
        assert_eq!((q.symbol_count(), q.rule_count()), (6, 1));
        let q = build(&chars("aaaa"));
        assert_eq!(q.symbol_count(), 1);
        assert_eq!(q.finish().expand().collect::<Vec<_>>(), chars("aaaa"));
    }
}
