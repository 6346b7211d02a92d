//! The sgemv shapes of `data/sgemv_shapes.csv`, embedded at compile time. Not a module of the
//! library: the bench and the tests include this file with `#[path]`, each using part of it.
#![allow(dead_code)]

/// The file, as the binaries carry it.
const FILE: &str = include_str!("../data/sgemv_shapes.csv");
const HEADER: &str = "m,n,pad,a_offset,x_offset,sets";
/// Every set a row may name (the file's header comment says who takes each).
const SETS: [&str; 6] = ["issue", "dispatch", "bench", "views", "plan-n", "plan-t"];

/// One row: A is `m` × `n`, row-major with leading dimension `n + pad`, from element
/// `a_offset` of its buffer; x from element `x_offset` of its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Case {
    pub m: usize,
    pub n: usize,
    pub pad: usize,
    pub a_offset: usize,
    pub x_offset: usize,
    sets: &'static str,
}

impl Case {
    pub fn lda(&self) -> usize {
        self.n + self.pad
    }
    /// Elements of A's buffer: the offset, then m rows of stride lda, the last one n long.
    pub fn a_len(&self) -> usize {
        self.a_offset + (self.m - 1) * self.lda() + self.n
    }
    /// Whether the row names `set`.
    pub fn is_in(&self, set: &str) -> bool {
        self.sets.split(' ').any(|s| s == set)
    }
}

/// Every row, in the file's order. Panics on a malformed line or an unknown set.
pub fn all() -> Vec<Case> {
    let mut lines = FILE.lines().enumerate().filter(|(_, l)| !l.trim().is_empty() && !l.starts_with('#'));
    assert_eq!(lines.next().map(|(_, l)| l), Some(HEADER), "data/sgemv_shapes.csv: header");
    lines.map(|(i, line)| parse(line).unwrap_or_else(|e| panic!("data/sgemv_shapes.csv:{}: {}", i + 1, e))).collect()
}

/// The rows that name `set`, in the file's order.
pub fn in_set(set: &str) -> Vec<Case> {
    assert!(SETS.contains(&set), "unknown set {:?}", set);
    all().into_iter().filter(|c| c.is_in(set)).collect()
}

fn parse(line: &'static str) -> Result<Case, String> {
    let fields: Vec<&'static str> = line.split(',').collect();
    if fields.len() != 6 {
        return Err(format!("{} fields, want 6", fields.len()));
    }
    let num = |i: usize| fields[i].parse::<usize>().map_err(|e| format!("{:?}: {}", fields[i], e));
    let case = Case { m: num(0)?, n: num(1)?, pad: num(2)?, a_offset: num(3)?, x_offset: num(4)?, sets: fields[5] };
    if case.m == 0 || case.n == 0 {
        return Err("m and n must be at least 1".into());
    }
    match case.sets.split(' ').find(|s| !SETS.contains(s)) {
        Some(bad) => Err(format!("unknown set {:?}", bad)),
        None => Ok(case),
    }
}
