//! The gemv shapes of `data/gemv_shapes.csv` (language-model decoding: projections and
//! attention heads), embedded at compile time. Not a module of the library: the bench includes
//! this file with `#[path]`.
#![allow(dead_code)]

/// The file, as the binary carries it.
const FILE: &str = include_str!("../data/gemv_shapes.csv");
const HEADER: &str = "batch,m,n,sets";
/// Every set a row may name (the file's header comment says who takes each).
const SETS: [&str; 2] = ["llama", "attention"];

/// One row: `batch` problems, each A `m` × `n` row-major and contiguous, back to back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GemvShape {
    pub batch: usize,
    pub m: usize,
    pub n: usize,
}

/// The rows that name `set`, in the file's order. Panics on a malformed line or an unknown set.
pub fn in_set(set: &str) -> Vec<GemvShape> {
    assert!(SETS.contains(&set), "unknown set {:?}", set);
    let mut lines = FILE.lines().enumerate().filter(|(_, l)| !l.trim().is_empty() && !l.starts_with('#'));
    assert_eq!(lines.next().map(|(_, l)| l), Some(HEADER), "data/gemv_shapes.csv: header");
    let rows = lines.map(|(i, line)| parse(line).unwrap_or_else(|e| panic!("data/gemv_shapes.csv:{}: {}", i + 1, e)));
    rows.filter(|(_, sets)| sets.split(' ').any(|s| s == set)).map(|(shape, _)| shape).collect()
}

fn parse(line: &'static str) -> Result<(GemvShape, &'static str), String> {
    let fields: Vec<&'static str> = line.split(',').collect();
    if fields.len() != 4 {
        return Err(format!("{} fields, want 4", fields.len()));
    }
    let num = |i: usize| fields[i].parse::<usize>().map_err(|e| format!("{:?}: {}", fields[i], e));
    let shape = GemvShape { batch: num(0)?, m: num(1)?, n: num(2)? };
    if shape.batch == 0 || shape.m == 0 || shape.n == 0 {
        return Err("batch, m and n must be at least 1".into());
    }
    match fields[3].split(' ').find(|s| !SETS.contains(s)) {
        Some(bad) => Err(format!("unknown set {:?}", bad)),
        None => Ok((shape, fields[3])),
    }
}
