//! argmin and argmax of a thread's 16-byte vector of columns of halves by packed extremes:
//! each word of the vector (two columns) keeps its lanes' extremes so far, folded four rows at
//! a time by PTX's `.NaN` max or min ([`ArgElement::word_max`]) and compared with them once per
//! four rows. Each column keeps, without a branch, the first row of the last batch that moved
//! its lane and that batch's four elements; at the end of the walk the thread takes, for each
//! column, the first of those rows that reached the extreme.
//!
//! Against a key per element (`Track`: a key, a compare and a select per element), a batch of
//! four rows of eight columns takes four packed ops per word, and two pairings and three selects
//! per column. Searching each moving batch for its row instead would branch in about half of a
//! warp's batches on random data (some lane of the warp moves); reading the batches again at
//! the end instead of holding them moved 1.75× the sum's DRAM bytes on 2^20 × 64 (a 32-byte
//! sector for each 2-byte element, long evicted from L2). `AXIS_WORD_TRACK_MIN_ROWS` says from
//! how many rows it pays, and the `words` entries are apart from `cols` so that `cols` keeps its
//! code.
//!
//! Why a lane that changed bits went strictly further: `.NaN` max and min order -0.0 below
//! +0.0 and return the canonical NaN for any NaN (PTX ISA, `max`, `min`), so the extreme of the
//! best and the new rows differs in bits from the best exactly when that lane's key went
//! strictly further; a NaN best stays canonical, so a later NaN leaves it (the first NaN wins).
//! So the last batch that changed a lane holds the first row reaching its final extreme.
use crate::{
    axis::{walk_rows, ColumnPart, MAX_COLUMN_WIDTH},
    ops::arg::{ArgElement, Direction, Track},
    thread::load_v4,
};
use core::marker::PhantomData;

/// `a` if `c`, else `b`: a `selp`, no branch.
#[inline(always)]
fn select_u32(c: bool, a: u32, b: u32) -> u32 {
    if c {
        a
    } else {
        b
    }
}

/// The tracks of one 16-byte vector of columns toward `D`: each word's extremes so far, and
/// for each column the first row of the last batch that moved its extreme (an offset from the
/// thread's first row) and that batch's four elements, rows 0 and 1 in the low and high half of
/// `held[k][0]`, rows 2 and 3 of `held[k][1]` (a batch of one row: that row four times). After
/// [`WordTracks::find_rows`], `row` holds each column's first row reaching its extreme.
struct WordTracks<E, D> {
    best: [u32; 4],
    row: [u32; MAX_COLUMN_WIDTH],
    held: [[u32; 2]; MAX_COLUMN_WIDTH],
    end: PhantomData<(E, D)>,
}

impl<E: ArgElement, D: Direction<E>> WordTracks<E, D> {
    #[inline(always)]
    fn start() -> Self {
        let start = E::splat(D::START);
        WordTracks {
            best: [start; 4],
            row: [0; MAX_COLUMN_WIDTH],
            held: [[start; 2]; MAX_COLUMN_WIDTH],
            end: PhantomData,
        }
    }

    /// The batch of rows from offset `r` (from the first row) as the vectors `v[j]` (a batch of
    /// one row: `v[0]` in all four). No branch: a lane whose bits changed went strictly further,
    /// and its column takes `r` as its batch and the batch's elements as its held ones.
    #[inline(always)]
    fn see(&mut self, v: &[[u32; 4]; 4], count: usize, r: u32) {
        for w in 0..4 {
            let x = if count == 4 {
                D::word_extreme(D::word_extreme(v[0][w], v[1][w]), D::word_extreme(v[2][w], v[3][w]))
            } else {
                v[0][w]
            };
            let best = D::word_extreme(self.best[w], x);
            let moved = best ^ self.best[w];
            // Each lane's elements of rows 0 and 1, and of rows 2 and 3, paired in a word (a
            // `&dyn` pairing is inlined away: no indirect call in the PTX; a generic helper
            // instead changed the SASS of every `words` entry).
            let low = |a: u32, b: u32| (a & 0xffff) | (b << 16);
            let high = |a: u32, b: u32| (a >> 16) | (b & 0xffff_0000);
            let rows = |pair: &dyn Fn(u32, u32) -> u32| [pair(v[0][w], v[1][w]), pair(v[2][w], v[3][w])];
            self.take(2 * w, moved & 0xffff != 0, r, rows(&low));
            self.take(2 * w + 1, moved >> 16 != 0, r, rows(&high));
            self.best[w] = best;
        }
    }

    /// Turns each column's batch into the first of its rows `batch + j·stride` whose held
    /// element keys as the column's extreme. The batch that last moved a lane holds its extreme;
    /// a column that never moved keeps row 0, whose element is then the start value (or the walk
    /// is empty), as are its held ones.
    #[inline(always)]
    fn find_rows(&mut self, stride: u32) {
        // Column by column at constant indices (a loop left rolled puts the tracks in local
        // memory); the eight halves of a vector.
        self.find_row(0, stride);
        self.find_row(1, stride);
        self.find_row(2, stride);
        self.find_row(3, stride);
        self.find_row(4, stride);
        self.find_row(5, stride);
        self.find_row(6, stride);
        self.find_row(7, stride);
    }

    /// Column `k` takes batch `r` and its elements `held` where it moved.
    #[inline(always)]
    fn take(&mut self, k: usize, moved: bool, r: u32, held: [u32; 2]) {
        self.row[k] = select_u32(moved, r, self.row[k]);
        self.held[k][0] = select_u32(moved, held[0], self.held[k][0]);
        self.held[k][1] = select_u32(moved, held[1], self.held[k][1]);
    }

    /// [`WordTracks::find_rows`] for column `k`.
    #[inline(always)]
    fn find_row(&mut self, k: usize, stride: u32) {
        let (target, batch) = (D::key(self.extreme(k)), self.row[k]);
        let key = |j: usize| D::key(E::lane(&[self.held[k][j / 2]; 4], j % 2));
        let mut row = batch;
        for j in (1..4).rev() {
            row = select_u32(key(j) == target, batch + j as u32 * stride, row);
        }
        self.row[k] = select_u32(key(0) == target, batch, row);
    }

    /// Column `k`'s extreme so far (the canonical NaN for any NaN).
    #[inline(always)]
    fn extreme(&self, k: usize) -> E {
        E::lane(&[self.best[k / 2]; 4], k % 2)
    }

    /// Element `e` of column `k` in row `r`, the thread's last row.
    #[inline(always)]
    fn see_last(&mut self, k: usize, e: E, r: u32) {
        if D::further(D::key(e), D::key(self.extreme(k))) {
            self.row[k] = r;
            let lane = 0xffff_u32 << (16 * (k % 2));
            self.best[k / 2] = (self.best[k / 2] & !lane) | (E::splat(e) & lane);
        }
    }
}

/// A `cols` launch's thread over its 16-byte vector of columns of halves (`width` =
/// `E::PER_VEC`), as [`crate::axis::walk_columns`] walks them: rows in order, eight loads in
/// flight. Hands column `c`'s extreme and first row reaching it on as a [`Track`] of single
/// elements, `store(c, slot, track)` (at `usize::MAX` for a thread without rows), or a whole
/// vector's tracks in slots from its first column at once with `store_vector(col, tracks)` where
/// that returns true.
///
/// # Safety
/// As the `cols` kernel: every row but the last holds the whole vector (a partial last vector
/// lies in the row padding, as lda ≥ `E::PER_VEC`); the last row is read element by element.
/// Each split holds at most [`crate::axis_arg::WORD_SPLIT_MAX_ROWS`] rows.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn walk_column_words<E, D, S, V>(
    input: *const E,
    rows: usize,
    n: usize,
    lda: usize,
    tile: u32,
    splits: u32,
    store: S,
    store_vector: V,
) where
    E: ArgElement,
    D: Direction<E>,
    S: Fn(usize, usize, Track<E, D>),
    V: Fn(usize, &[Track<E, D>; MAX_COLUMN_WIDTH]) -> bool,
{
    let part = match ColumnPart::of_thread(rows, n, tile, splits, E::PER_VEC as u32) {
        Some(part) => part,
        None => return,
    };
    let (p, first, phases) = (input.add(part.col), part.first, part.phases);
    let mut t = WordTracks::<E, D>::start();
    let whole = part.col + E::PER_VEC <= n;
    let last = rows.saturating_sub(1);
    let end = if whole { part.end } else { core::cmp::min(part.end, last) };
    let row = |r: usize| load_v4(p.add(r * lda) as *const [u32; 4]);
    // Offsets from `first` fit 32 bits (`WORD_SPLIT_MAX_ROWS`).
    // Each call with a constant count: a row index `j` known only at run time would put the
    // batch in local memory.
    let r = walk_rows(first, end, phases, row, |v, four, r| {
        let at = (r - first) as u32;
        if four {
            t.see(&v, 4, at)
        } else {
            t.see(&v, 1, at)
        }
    });
    t.find_rows(phases as u32);
    let track = |t: &WordTracks<E, D>, k: usize| {
        let row = if first < part.end { first + t.row[k] as usize } else { usize::MAX };
        Track::reached(D::key(t.extreme(k)), row)
    };
    if whole && part.slot_is_column() {
        let mut tracks = [track(&t, 0); MAX_COLUMN_WIDTH];
        for k in 1..E::PER_VEC {
            tracks[k] = track(&t, k);
        }
        if store_vector(part.col, &tracks) {
            return;
        }
    }
    for k in 0..E::PER_VEC {
        if part.col + k < n {
            if !whole && r == last && r < part.end {
                t.see_last(k, *p.add(r * lda + k), (r - first) as u32);
            }
            store(part.col + k, part.slot(part.col + k), track(&t, k));
        }
    }
}
