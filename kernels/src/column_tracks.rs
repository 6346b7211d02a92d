//! argmin and argmax of a thread's 16-byte vector of columns of halves by packed extremes:
//! each word of the vector (two columns) keeps its lanes' extremes so far, folded four rows at
//! a time by PTX's `.NaN` max or min ([`ArgElement::word_max`]) and compared with them once per
//! four rows. Only a batch that moves some word looks, lane by lane, for the first row that
//! reached a lane's new extreme.
//!
//! Against a key per element (`Track`: a key, a compare and a select per element), a batch of
//! four rows of eight columns takes four packed ops and a compare per word and one branch. A
//! long walk moves few words: `AXIS_WORD_TRACK_MIN_ROWS` says from how many rows it pays, and
//! the `words` entries are apart from `cols` so that `cols` keeps its code.
//!
//! Why a moved word means a strictly further element: `.NaN` max and min order -0.0 below
//! +0.0 and return the canonical NaN for any NaN (PTX ISA, `max`, `min`), so the extreme of the
//! best and the new rows differs in bits from the best exactly when some lane's key went
//! strictly further; a NaN best stays canonical, so a later NaN leaves it (the first NaN wins).
use crate::{
    axis::{walk_rows, ColumnPart, MAX_COLUMN_WIDTH},
    ops::arg::{ArgElement, Direction, Track},
    thread::load_v4,
};
use core::marker::PhantomData;

/// The tracks of one 16-byte vector of columns toward `D`: each word's extremes so far, and
/// each column's first row reaching its extreme, as an offset from the thread's first row.
struct WordTracks<E, D> {
    best: [u32; 4],
    row: [u32; MAX_COLUMN_WIDTH],
    end: PhantomData<(E, D)>,
}

impl<E: ArgElement, D: Direction<E>> WordTracks<E, D> {
    #[inline(always)]
    fn start() -> Self {
        WordTracks { best: [E::splat(D::START); 4], row: [0; MAX_COLUMN_WIDTH], end: PhantomData }
    }

    /// Rows `r + j·stride` (offsets from the first row) as the vectors `v[j]`, or `v[0]` alone
    /// (`count` 1).
    #[inline(always)]
    fn see(&mut self, v: &[[u32; 4]; 4], count: usize, r: u32, stride: u32) {
        let (mut best, mut moved) = (self.best, 0);
        for w in 0..4 {
            let x = if count == 4 {
                D::word_extreme(D::word_extreme(v[0][w], v[1][w]), D::word_extreme(v[2][w], v[3][w]))
            } else {
                v[0][w]
            };
            best[w] = D::word_extreme(self.best[w], x);
            // Word by word, not as arrays: an array compare keeps them in local memory.
            moved |= best[w] ^ self.best[w];
        }
        // One branch per batch: most batches of a long walk move no word.
        if moved == 0 {
            return;
        }
        // Word by word with constant indices (a loop the codegen left rolled put the tracks in
        // local memory).
        self.moved(0, best[0], |j| v[j][0], count, r, stride);
        self.moved(1, best[1], |j| v[j][1], count, r, stride);
        self.moved(2, best[2], |j| v[j][2], count, r, stride);
        self.moved(3, best[3], |j| v[j][3], count, r, stride);
    }

    /// Word `w`'s extremes went to `best` over the `count` rows `r + j·stride` (word `word(j)`).
    #[inline(always)]
    fn moved(&mut self, w: usize, best: u32, word: impl Fn(usize) -> u32, count: usize, r: u32, stride: u32) {
        if best == self.best[w] {
            return;
        }
        self.lane_moved(w, 0, best, &word, count, r, stride);
        self.lane_moved(w, 1, best, &word, count, r, stride);
        self.best[w] = best;
    }

    /// Lane `h` of word `w`, if it moved, takes the first of the rows whose element keys as its
    /// new extreme.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn lane_moved(&mut self, w: usize, h: usize, best: u32, word: &impl Fn(usize) -> u32, count: usize, r: u32, stride: u32) {
        let key = |x: u32| D::key(E::lane(&[x; 4], h));
        let target = key(best);
        if target == key(self.best[w]) {
            return;
        }
        let j = if count == 1 || key(word(0)) == target {
            0
        } else if key(word(1)) == target {
            1
        } else if key(word(2)) == target {
            2
        } else {
            3
        };
        self.row[w * 2 + h] = r + j * stride;
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
/// Each split holds fewer than 2^32 rows.
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
    // Offsets from `first` fit 32 bits: a split holds fewer than 2^32 rows.
    // Each call with a constant count: a row index `j` known only at run time would put the
    // batch in local memory.
    let r = walk_rows(first, end, phases, row, |v, four, r| {
        let (at, stride) = ((r - first) as u32, phases as u32);
        if four {
            t.see(&v, 4, at, stride)
        } else {
            t.see(&v, 1, at, stride)
        }
    });
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
