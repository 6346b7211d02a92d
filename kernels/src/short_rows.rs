//! Rows of a few 16-byte vectors, a thread each: `axis_short_{op}_{type}` (the typed ops) and
//! `axis_arg_short_{op}_{type}` (argmin, argmax) over [`SHORT_ROW_TYPES`]. A thread loads its
//! row's vectors (up to [`SHORT_ROW_VECTORS`]) together, folds them from its registers and
//! stores the row's result: no shuffles, and the arg ops find their element in the vector they
//! hold instead of reading it again. The `rows` kernels give such rows two lanes, each with one
//! load in flight at a time.
//!
//! Each row folds in element order, so results are deterministic (and, for float sums, may
//! differ in the last bits from the `rows` kernels', which fold lanes apart).
//!
//! # Safety
//! Any grid and whole-warp blocks. `input` and lda·size are multiples of 16 bytes (every row
//! starts 16-byte aligned) and `input` holds (rows − 1)·lda + n elements; the outputs hold
//! `rows` results (arg: `indices` 8-byte elements when `wide` is 1, else 4-byte; `values` null or
//! `rows` elements). Rows longer than [`SHORT_ROW_VECTORS`] vectors are correct, the rest of them
//! read element by element.
//!
//! # Thread mapping
//! Row `block·B + tid` (plus multiples of the grid's threads) to the thread; its vector j to the
//! thread's j-th load, the elements past its last whole vector after them.
#[cfg(target_os = "cuda")]
use crate::{
    axis::for_thread_rows,
    axis_arg::ArgLines,
    config::{MinMax as Pair, ValueIndex},
    ops::arg::{ArgElement, ArgOf, Direction, Largest, Smallest, Track},
    ops::{Element, Fold, Max, Min, MinMax, ReduceOp, Sum},
    thread::load_v4,
};
#[cfg(target_os = "cuda")]
use core::marker::PhantomData;
#[cfg(target_os = "cuda")]
use cuda_std::prelude::*;
#[cfg(target_os = "cuda")]
use half::{bf16, f16};

/// Most 16-byte vectors a thread holds of its row: 64 bytes, four loads in flight, 16 registers.
pub const SHORT_ROW_VECTORS: usize = 4;

/// The first `N` vectors of the row at `row` (16-byte aligned), loaded together.
#[cfg(target_os = "cuda")]
#[inline(always)]
unsafe fn load_row<E, const N: usize>(row: *const E) -> [[u32; 4]; N] {
    let vecs = row as *const [u32; 4];
    let mut v = [[0u32; 4]; N];
    for j in 0..N {
        v[j] = load_v4(vecs.add(j));
    }
    v
}

/// Vector `i` of `v` (`i` < N), picked by constant indices: a variable one would put `v` in
/// local memory.
#[cfg(target_os = "cuda")]
#[inline(always)]
fn held<const N: usize>(v: &[[u32; 4]; N], i: usize) -> [u32; 4] {
    let mut w = [0u32; 4];
    for j in 0..N {
        if i == j {
            w = v[j];
        }
    }
    w
}

/// How a thread reduces one row: its first `N` whole vectors, held in registers, then the
/// elements after them.
#[cfg(target_os = "cuda")]
trait RowReduce<E> {
    type Result;
    unsafe fn row<const N: usize>(p: *const E, n: usize) -> Self::Result;
}

/// A typed op `O`'s fold.
#[cfg(target_os = "cuda")]
struct Values<O>(PhantomData<O>);

#[cfg(target_os = "cuda")]
impl<E: Element, O: Fold<E>> RowReduce<E> for Values<O> {
    type Result = O::Acc;
    #[inline(always)]
    unsafe fn row<const N: usize>(p: *const E, n: usize) -> O::Acc {
        let v = load_row::<E, N>(p);
        let mut acc = O::identity();
        for j in 0..N {
            acc = O::fold_vec(acc, &v[j]);
        }
        for k in N * E::PER_VEC..n {
            acc = O::fold(acc, *p.add(k));
        }
        acc
    }
}

/// argmin or argmax toward `D`: the first vector that goes furthest ([`Track`]), its element
/// found in the registers, then the elements after the vectors.
#[cfg(target_os = "cuda")]
struct Args<D>(PhantomData<D>);

#[cfg(target_os = "cuda")]
impl<E: ArgElement, D: Direction<E>> RowReduce<E> for Args<D> {
    type Result = ValueIndex<E>;
    #[inline(always)]
    unsafe fn row<const N: usize>(p: *const E, n: usize) -> ValueIndex<E> {
        let v = load_row::<E, N>(p);
        let mut track = Track::<E, D>::start(0);
        for j in 0..N {
            track.see(&v[j], j);
        }
        let mut best = track.resolve(N, 0, |i| held(&v, i));
        for k in N * E::PER_VEC..n {
            best = ArgOf::<E, D>::combine(best, ValueIndex { value: *p.add(k), index: k as u64 });
        }
        best
    }
}

/// Reduces each of this thread's rows as `R` and stores its result with `store(row, result)`,
/// with N = min(n / PER_VEC, [`SHORT_ROW_VECTORS`]) whole vectors a row: a loop of its own per
/// N, so that each holds its vectors in registers.
#[cfg(target_os = "cuda")]
#[inline(always)]
unsafe fn for_short_rows<E: Element, R: RowReduce<E>, S: Fn(usize, R::Result)>(
    input: *const E,
    (rows, n, lda): (usize, usize, usize),
    store: S,
) {
    let p = |r: usize| input.add(r * lda);
    match core::cmp::min(n / E::PER_VEC, SHORT_ROW_VECTORS) {
        0 => for_thread_rows(rows, |r| store(r, R::row::<0>(p(r), n))),
        1 => for_thread_rows(rows, |r| store(r, R::row::<1>(p(r), n))),
        2 => for_thread_rows(rows, |r| store(r, R::row::<2>(p(r), n))),
        3 => for_thread_rows(rows, |r| store(r, R::row::<3>(p(r), n))),
        _ => for_thread_rows(rows, |r| store(r, R::row::<4>(p(r), n))),
    }
}

/// The `short` entry point of typed op `$op` (named `$opname`) over `$e`, accumulating in `$acc`.
macro_rules! short_entry {
    ($e:ident, $opname:ident: $op:ty, $acc:ty) => {
        paste::paste! {
            #[cfg(target_os = "cuda")]
            #[kernel]
            pub unsafe fn [<axis_short_ $opname _ $e>](
                input: *const $e, rows: usize, n: usize, lda: usize, out: *mut $acc,
            ) {
                crate::grid_dependency::wait_for_prerequisite_grids();
                for_short_rows::<$e, Values<$op>, _>(input, (rows, n, lda), |r, v| *out.add(r) = v)
            }
        }
    };
}

/// The arg `short` entry point of `$opname` (direction `$dir`) over `$e`: results as the `rows`
/// arg kernels store them whole (values or null, indices, wide).
macro_rules! arg_short_entry {
    ($e:ident, $opname:ident: $dir:ty) => {
        paste::paste! {
            #[cfg(target_os = "cuda")]
            #[kernel]
            pub unsafe fn [<axis_arg_short_ $opname _ $e>](
                input: *const $e, rows: usize, n: usize, lda: usize, values: *mut $e, indices: *mut u8, wide: u32,
            ) {
                crate::grid_dependency::wait_for_prerequisite_grids();
                let out = ArgLines { partials: core::ptr::null_mut(), values, indices, wide };
                for_short_rows::<$e, Args<$dir>, _>(input, (rows, n, lda), |r, v| out.store(r, v))
            }
        }
    };
}

/// Every typed op's and arg op's `short` entry point for each type, and their list.
macro_rules! short_rows {
    ($($t:ident => $sum:ident),* $(,)?) => {
        /// Element types with `short` entries: `axis_short_{op}_{type}` over `TYPED_OPS` and
        /// `axis_arg_short_{op}_{type}` over `AXIS_ARG_OPS`.
        pub const SHORT_ROW_TYPES: [&str; [$(stringify!($t)),*].len()] = [$(stringify!($t)),*];
        $(
            short_entry!($t, sum: Sum<$sum>, $sum);
            short_entry!($t, min: Min<$t>, $t);
            short_entry!($t, max: Max<$t>, $t);
            short_entry!($t, minmax: MinMax<$t>, Pair<$t>);
            arg_short_entry!($t, argmin: Smallest);
            arg_short_entry!($t, argmax: Largest);
        )*
    };
}
short_rows! { f32 => f32, f16 => f32, bf16 => f32 }
