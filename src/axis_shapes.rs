//! The axis-reduction shapes of `data/axis_shapes.csv`, embedded at compile time. Not a module
//! of the library: the bench and the tests include this file with `#[path]`.
#![allow(dead_code)]

const FILE: &str = include_str!("../data/axis_shapes.csv");
const HEADER: &str = "kind,m,n";

/// One row: a dense m × n matrix, or `m` ragged segments of lengths 0..=n.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AxisCase {
    Dense { m: usize, n: usize },
    Ragged { segments: usize, longest: usize },
}

impl AxisCase {
    /// Elements of the input.
    pub fn len(&self) -> usize {
        match *self {
            AxisCase::Dense { m, n } => m * n,
            AxisCase::Ragged { .. } => *self.offsets().last().unwrap() as usize,
        }
    }

    /// The ragged case's m + 1 offsets (the file's formula; empty for a dense case).
    pub fn offsets(&self) -> Vec<u64> {
        let (segments, longest) = match *self {
            AxisCase::Ragged { segments, longest } => (segments, longest as u64),
            AxisCase::Dense { .. } => return vec![],
        };
        let mut offsets = vec![0u64];
        for i in 0..segments as u64 {
            let len = (i.wrapping_mul(2_654_435_761) % (1 << 32)) % (longest + 1);
            offsets.push(offsets.last().unwrap() + len);
        }
        offsets
    }
}

/// Every row, in the file's order. Panics on a malformed line.
pub fn all() -> Vec<AxisCase> {
    let mut lines = FILE.lines().filter(|l| !l.trim().is_empty() && !l.starts_with('#'));
    assert_eq!(lines.next(), Some(HEADER), "data/axis_shapes.csv: header");
    lines
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            let num = |i: usize| f[i].trim().parse::<usize>().unwrap_or_else(|_| panic!("axis_shapes.csv: {:?}", l));
            match f[0] {
                "dense" => AxisCase::Dense { m: num(1), n: num(2) },
                "ragged" => AxisCase::Ragged { segments: num(1), longest: num(2) },
                other => panic!("axis_shapes.csv: unknown kind {:?}", other),
            }
        })
        .collect()
}
