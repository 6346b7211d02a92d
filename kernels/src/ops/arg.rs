//! Arg operators: argmin, argmax and argminmax as reductions over (value, index) pairs.
//!
//! Order: [`crate::arg_order`] (shared with the host), the order of [`super::Ordered`]'s
//! min/max, so an argmax's value is the max's. Ties (equal keys, all NaNs equal) go to the
//! smallest index: the first NaN wins, as in `torch.argmax`.
use super::{Element, Ordered, ReduceOp};
use crate::arg_order::{pick, ArgKey, End};
pub use crate::arg_order::{Largest, Smallest};
use crate::config::{MinMax as Pair, ValueIndex, WARP_SIZE};
use crate::packed::byte_vec_extreme;
use crate::shuffle::Shuffle;
use crate::warp::segment_reduce;
use core::marker::PhantomData;

/// The index of a pair that holds no element yet: above every real index, so it loses ties.
pub const NO_INDEX: u64 = u64::MAX;

/// An element type the arg operators order: [`ArgKey`]'s keys, and a 16-byte vector's extremes.
pub trait ArgElement: ArgKey + Ordered + Element {
    /// The largest element of the 16-byte vector `w` in `max_key` order (lane by lane here;
    /// bytes and halves override it with packed instructions).
    #[inline(always)]
    fn vec_max(w: &[u32; 4]) -> Self {
        let mut m = Self::lane(w, 0);
        for k in 1..Self::PER_VEC {
            m = Self::max2(m, Self::lane(w, k));
        }
        m
    }
    /// The smallest element of `w` in `min_key` order.
    #[inline(always)]
    fn vec_min(w: &[u32; 4]) -> Self {
        let mut m = Self::lane(w, 0);
        for k in 1..Self::PER_VEC {
            m = Self::min2(m, Self::lane(w, k));
        }
        m
    }
    /// [`ArgKey::max_key`] of [`ArgElement::vec_max`]: the key the tracks compare.
    #[inline(always)]
    fn vec_max_key(w: &[u32; 4]) -> Self::Key {
        Self::vec_max(w).max_key()
    }
    /// Key `k` of lane `lane ^ mask` (`shfl.sync.bfly`).
    unsafe fn shfl_key(k: Self::Key, mask: u32) -> Self::Key;
    /// Elements per 32-bit word of [`ArgElement::word_max`] and [`ArgElement::word_min`]; 0
    /// where the type has neither (its column tracks key every element).
    const WORD_LANES: usize = 0;
    /// Lane by lane max of two words of elements in `max_key` order, a NaN as the canonical NaN
    /// (PTX's `.NaN` max, which orders -0.0 below +0.0). Only where `WORD_LANES` > 0.
    #[inline(always)]
    fn word_max(a: u32, _b: u32) -> u32 {
        a
    }
    /// Lane by lane min in `min_key` order, as [`ArgElement::word_max`].
    #[inline(always)]
    fn word_min(a: u32, _b: u32) -> u32 {
        a
    }
    /// A word with `x` in each of its `WORD_LANES` lanes.
    #[inline(always)]
    fn splat(_x: Self) -> u32 {
        0
    }
}

/// An [`ArgElement`] impl's [`ArgElement::vec_max_key`] where `vec_max` folds with PTX's `.NaN`
/// max, whose NaN is canonical: no NaN test.
macro_rules! canonical_max_key {
    () => {
        #[inline(always)]
        fn vec_max_key(w: &[u32; 4]) -> Self::Key {
            Self::vec_max(w).max_key_canonical()
        }
    };
}

/// An [`ArgElement`] impl's [`ArgElement::shfl_key`] (every key type shuffles).
macro_rules! key_shuffle {
    () => {
        #[inline(always)]
        unsafe fn shfl_key(k: Self::Key, mask: u32) -> Self::Key {
            k.shfl_xor(mask)
        }
    };
}

/// Types whose vector extremes go lane by lane.
macro_rules! arg_plain {
    ($($t:ty),*) => {$(
        impl ArgElement for $t {
            key_shuffle!();
        }
    )*};
}
arg_plain!(u16, i16, u32, i32, f64);

/// f32: a vector's max by `max.NaN.f32` ([`Ordered::max2`]).
impl ArgElement for f32 {
    canonical_max_key!();
    key_shuffle!();
}

/// Bytes: vector extremes packed ([`byte_vec_extreme`]).
macro_rules! arg_byte {
    ($($t:ty: $flip:expr),*) => {$(
        impl ArgElement for $t {
            #[inline(always)]
            fn vec_max(w: &[u32; 4]) -> $t { (byte_vec_extreme::<true>(w, $flip) ^ ($flip as u32) as u8) as $t }
            #[inline(always)]
            fn vec_min(w: &[u32; 4]) -> $t { (byte_vec_extreme::<false>(w, $flip) ^ ($flip as u32) as u8) as $t }
            key_shuffle!();
        }
    )*};
}
arg_byte!(u8: 0, i8: 0x8080_8080);

/// Halves: a vector folded two lanes at a time by the packed max and min, two columns' words
/// likewise.
macro_rules! arg_half {
    ($($t:ty: $max:literal $min:literal);*) => {$(
        impl ArgElement for $t {
            #[inline(always)]
            fn vec_max(w: &[u32; 4]) -> $t { <$t>::from_bits(packed_halves!(w, $max)) }
            #[inline(always)]
            fn vec_min(w: &[u32; 4]) -> $t { <$t>::from_bits(packed_halves!(w, $min)) }
            canonical_max_key!();
            key_shuffle!();
            const WORD_LANES: usize = 2;
            #[inline(always)]
            fn word_max(a: u32, b: u32) -> u32 { packed_pair!($max, a, b) }
            #[inline(always)]
            fn word_min(a: u32, b: u32) -> u32 { packed_pair!($min, a, b) }
            #[inline(always)]
            fn splat(x: $t) -> u32 { x.to_bits() as u32 * 0x1_0001 }
        }
    )*};
}
/// The packed 16-bit op `$inst` on the words `$a` and `$b`.
macro_rules! packed_pair {
    ($inst:literal, $a:expr, $b:expr) => {{
        let d: u32;
        unsafe {
            asm!(concat!($inst, " {0}, {1}, {2};"), out(reg32) d, in(reg32) $a, in(reg32) $b,
                 options(pure, nomem, nostack));
        }
        d
    }};
}
/// The packed 16-bit op `$inst` over a vector's four words, then over the two halves left.
macro_rules! packed_halves {
    ($w:expr, $inst:literal) => {{
        let op = |a: u32, b: u32| packed_pair!($inst, a, b);
        let acc = op(op($w[0], $w[1]), op($w[2], $w[3]));
        op(acc, acc >> 16) as u16
    }};
}
arg_half!(half::f16: "max.NaN.f16x2" "min.NaN.f16x2"; half::bf16: "max.NaN.bf16x2" "min.NaN.bf16x2");

/// Which end an arg operator looks for: the shared order's [`End`], with its identity and the
/// key of a vector's extreme.
pub trait Direction<T: ArgElement>: End<T> {
    /// The value a pair with no element starts from (the direction's identity).
    const START: T;
    /// The key of one 16-byte vector's extreme toward this end.
    fn vec_key(w: &[u32; 4]) -> T::Key;
    /// Lane by lane extreme toward this end of two words of elements
    /// ([`ArgElement::word_max`] or [`ArgElement::word_min`]).
    fn word_extreme(a: u32, b: u32) -> u32;
}

impl<T: ArgElement> Direction<T> for Largest {
    const START: T = T::LOWEST;
    #[inline(always)]
    fn vec_key(w: &[u32; 4]) -> T::Key {
        T::vec_max_key(w)
    }
    #[inline(always)]
    fn word_extreme(a: u32, b: u32) -> u32 {
        T::word_max(a, b)
    }
}
impl<T: ArgElement> Direction<T> for Smallest {
    const START: T = T::HIGHEST;
    #[inline(always)]
    fn vec_key(w: &[u32; 4]) -> T::Key {
        T::vec_min(w).min_key()
    }
    #[inline(always)]
    fn word_extreme(a: u32, b: u32) -> u32 {
        T::word_min(a, b)
    }
}

/// The arg reduction toward `D`'s end; see [`ArgMax`] and [`ArgMin`].
pub struct ArgOf<T, D>(PhantomData<(T, D)>);
/// (max value, its first index).
pub type ArgMax<T> = ArgOf<T, Largest>;
/// (min value, its first index).
pub type ArgMin<T> = ArgOf<T, Smallest>;
/// Both: `MinMax { min: argmin, max: argmax }`.
pub struct ArgMinMax<T>(PhantomData<T>);

impl<T: ArgElement, D: Direction<T>> ReduceOp for ArgOf<T, D> {
    type Acc = ValueIndex<T>;
    #[inline(always)]
    fn identity() -> ValueIndex<T> {
        ValueIndex { value: D::START, index: NO_INDEX }
    }
    #[inline(always)]
    fn combine(a: ValueIndex<T>, b: ValueIndex<T>) -> ValueIndex<T> {
        pick::<T, D>(a, b)
    }
}

impl<T: ArgElement> ReduceOp for ArgMinMax<T> {
    type Acc = Pair<ValueIndex<T>>;
    #[inline(always)]
    fn identity() -> Self::Acc {
        Pair { min: ArgMin::<T>::identity(), max: ArgMax::<T>::identity() }
    }
    #[inline(always)]
    fn combine(a: Self::Acc, b: Self::Acc) -> Self::Acc {
        Pair { min: pick::<T, Smallest>(a.min, b.min), max: pick::<T, Largest>(a.max, b.max) }
    }
    /// Half by half: one volatile store of the padded pair of pairs goes through local memory.
    #[inline(always)]
    unsafe fn put_partial(p: *mut Self::Acc, v: Self::Acc) {
        core::ptr::write_volatile(core::ptr::addr_of_mut!((*p).min), v.min);
        core::ptr::write_volatile(core::ptr::addr_of_mut!((*p).max), v.max);
    }
}

impl<T: Shuffle> Shuffle for ValueIndex<T> {
    #[inline(always)]
    unsafe fn shfl_xor(self, mask: u32) -> Self {
        ValueIndex { value: self.value.shfl_xor(mask), index: self.index.shfl_xor(mask) }
    }
}

/// A thread's running best in one direction over its 16-byte vectors (or single elements), which
/// it visits in increasing order: the key of the furthest vector extreme so far and the first
/// vector that reached it (a later vector replaces it only by going strictly further, so ties
/// keep the earlier one). The lane is found at the end, by reading that one vector again; a
/// single element's value is its key's, read again only for a NaN.
pub struct Track<T: ArgElement, D> {
    key: T::Key,
    vec: usize,
    dir: PhantomData<D>,
}

// By hand: a derive would ask `D: Copy` of the direction, a marker.
impl<T: ArgElement, D> Clone for Track<T, D> {
    #[inline(always)]
    fn clone(&self) -> Self {
        *self
    }
}
impl<T: ArgElement, D> Copy for Track<T, D> {}

impl<T: ArgElement, D: Direction<T>> Track<T, D> {
    /// A thread whose first vector is `first` (its key, `START`'s, is reached by that vector
    /// at the latest, so `first` stands until a vector goes further).
    #[inline(always)]
    pub fn start(first: usize) -> Self {
        Track { key: D::key(D::START), vec: first, dir: PhantomData }
    }

    /// Takes vector `i` with words `w`.
    #[inline(always)]
    pub fn see(&mut self, w: &[u32; 4], i: usize) {
        self.reach(D::vec_key(w), i);
    }

    /// Position `i` with key `k`: kept only when `k` goes strictly further than the best so far.
    #[inline(always)]
    fn reach(&mut self, k: T::Key, i: usize) {
        if D::further(k, self.key) {
            self.key = k;
            self.vec = i;
        }
    }

    /// Takes the four vectors `v`, vector `i + j·stride` in `v[j]`: their extremes are combined
    /// first, so the running best is compared once per batch; the first vector reaching a
    /// further key is kept.
    #[inline(always)]
    pub fn see4(&mut self, v: &[[u32; 4]; 4], i: usize, stride: usize) {
        self.reach4(
            [
                D::vec_key(&v[0]),
                D::vec_key(&v[1]),
                D::vec_key(&v[2]),
                D::vec_key(&v[3]),
            ],
            i,
            stride,
        );
    }

    /// Takes the four elements `e`, element `i + j·stride` in `e[j]`, as [`Track::see4`] takes
    /// vectors: one compare with the running best per four elements.
    #[inline(always)]
    pub fn see_elements4(&mut self, e: [T; 4], i: usize, stride: usize) {
        self.reach4([D::key(e[0]), D::key(e[1]), D::key(e[2]), D::key(e[3])], i, stride);
    }

    /// Positions `i + j·stride` with keys `k[j]`: their furthest key is compared with the best
    /// so far, and the first position reaching it is kept when it goes strictly further.
    #[inline(always)]
    fn reach4(&mut self, k: [T::Key; 4], i: usize, stride: usize) {
        let further = |a: T::Key, b: T::Key| if D::further(b, a) { b } else { a };
        let best = further(further(k[0], k[1]), further(k[2], k[3]));
        if D::further(best, self.key) {
            let j = if k[0] == best {
                0
            } else if k[1] == best {
                1
            } else if k[2] == best {
                2
            } else {
                3
            };
            self.key = best;
            self.vec = i + j * stride;
        }
    }

    /// Takes element `e` at position `i` (a track of single elements, such as a matrix column's
    /// rows, visited in increasing order).
    #[inline(always)]
    pub fn see_element(&mut self, e: T, i: usize) {
        self.reach(D::key(e), i);
    }

    /// A track of single elements whose furthest key `key` was first reached at position `at`
    /// (`usize::MAX`: no elements).
    #[inline(always)]
    pub fn reached(key: T::Key, at: usize) -> Self {
        Track { key, vec: at, dir: PhantomData }
    }

    /// (value, position) of the element tracked by [`Track::see_element`]: its value is its key's
    /// ([`ArgKey::from_key`]), read back with `load(position)` only for a NaN; the identity for a
    /// track started at `usize::MAX` that no element went past (no elements).
    #[inline(always)]
    pub fn resolve_element(self, load: impl Fn(usize) -> T) -> ValueIndex<T> {
        if self.vec == usize::MAX {
            return ArgOf::<T, D>::identity();
        }
        let value = match T::from_key(self.key) {
            Some(v) => v,
            None => load(self.vec),
        };
        ValueIndex { value, index: self.vec as u64 }
    }

    /// (value, index) of a track of positions within one range (`reached`, [`Track::see`] at a
    /// vector's first element): an element outside the range's vectors (before `head` or from
    /// `tail`) as [`Track::resolve_element`] with `element(position)`, else the first element
    /// with the tracked key in the vector at that position, `vector(v)` giving vector v's words
    /// (vectors from `head`); the identity for a track at `usize::MAX` (no elements).
    #[inline(always)]
    pub fn resolve_position(
        self,
        (head, tail): (usize, usize),
        element: impl Fn(usize) -> T,
        vector: impl Fn(usize) -> [u32; 4],
    ) -> ValueIndex<T> {
        if self.vec == usize::MAX || self.vec < head || self.vec >= tail {
            return self.resolve_element(element);
        }
        let v = (self.vec - head) / T::PER_VEC;
        Track::<T, D> { key: self.key, vec: v, dir: PhantomData }.resolve(v + 1, head, vector)
    }

    /// [`Track::resolve`] of the warp's best track, in lane 0 (`lane`; the others get the
    /// identity): the furthest key, then the smallest vector, since threads' vectors are
    /// disjoint and the first element of the smaller comes first. One lane of the warp reads its
    /// vector again instead of all 32. All 32 lanes call it together.
    #[inline(always)]
    pub unsafe fn resolve_in_warp(
        self,
        lane: usize,
        nvec: usize,
        head: usize,
        load: impl Fn(usize) -> [u32; 4],
    ) -> ValueIndex<T> {
        let t = segment_reduce::<FurthestTrack<T, D>, WARP_SIZE>(self);
        if lane != 0 {
            return ArgOf::<T, D>::identity();
        }
        t.resolve(nvec, head, load)
    }

    /// (value, index) of the first element with the tracked key in the tracked vector, whose
    /// words `load` gives, of vectors that start at element `head`; the identity when the
    /// thread had none of the `nvec` vectors.
    #[inline(always)]
    pub fn resolve(self, nvec: usize, head: usize, load: impl Fn(usize) -> [u32; 4]) -> ValueIndex<T> {
        if self.vec >= nvec {
            return ArgOf::<T, D>::identity();
        }
        let w = load(self.vec);
        // From the last lane down, so the first match stands; lanes by constant index only
        // (a variable one would put `w` in local memory).
        let (mut lane, mut value) = (T::PER_VEC - 1, T::lane(&w, T::PER_VEC - 1));
        for k in (0..T::PER_VEC - 1).rev() {
            let e = T::lane(&w, k);
            if D::key(e) == self.key {
                lane = k;
                value = e;
            }
        }
        ValueIndex { value, index: (head + self.vec * T::PER_VEC + lane) as u64 }
    }
}

/// Tracks as a reduction: the furthest key, then the smaller vector (threads' vectors are
/// disjoint, and the first element of the smaller comes first). Its identity, a track of no
/// vector, loses to every track of one, since no element's key falls short of `START`'s.
pub struct FurthestTrack<T, D>(PhantomData<(T, D)>);

impl<T: ArgElement, D: Direction<T>> ReduceOp for FurthestTrack<T, D> {
    type Acc = Track<T, D>;
    #[inline(always)]
    fn identity() -> Track<T, D> {
        Track { key: D::key(D::START), vec: usize::MAX, dir: PhantomData }
    }
    #[inline(always)]
    fn combine(a: Track<T, D>, b: Track<T, D>) -> Track<T, D> {
        let take_b = D::further(b.key, a.key) || (b.key == a.key && b.vec < a.vec);
        // Field by field, as `pick`.
        Track { key: if take_b { b.key } else { a.key }, vec: if take_b { b.vec } else { a.vec }, dir: PhantomData }
    }
}

impl<T: ArgElement, D> Shuffle for Track<T, D> {
    #[inline(always)]
    unsafe fn shfl_xor(self, mask: u32) -> Self {
        Track { key: T::shfl_key(self.key, mask), vec: (self.vec as u64).shfl_xor(mask) as usize, dir: PhantomData }
    }
}

/// How an arg operator folds a thread's elements: single elements as pairs, vectors through
/// [`Track`]s.
pub trait ArgFold<T: ArgElement>: ReduceOp {
    /// Whether the vector loop issues a batch's loads before comparing the previous batch: it
    /// pays for one direction; two directions' state would pass 64 registers, the most a
    /// 1024-thread block allows.
    const PREFETCH: bool = true;
    type State;
    /// The pair (or pairs) of element `e` at `index`.
    fn element(e: T, index: u64) -> Self::Acc;
    fn start(first: usize) -> Self::State;
    fn see(s: &mut Self::State, w: &[u32; 4], i: usize);
    /// [`ArgFold::see`] of the batch `v`, vector `i + j·stride` in `v[j]`.
    fn see4(s: &mut Self::State, v: &[[u32; 4]; 4], i: usize, stride: usize);
    fn resolve(s: Self::State, nvec: usize, head: usize, load: impl Fn(usize) -> [u32; 4]) -> Self::Acc;
    /// [`Track::resolve_in_warp`] of each track.
    unsafe fn resolve_in_warp(
        s: Self::State,
        lane: usize,
        nvec: usize,
        head: usize,
        load: impl Fn(usize) -> [u32; 4],
    ) -> Self::Acc;
}

impl<T: ArgElement, D: Direction<T>> ArgFold<T> for ArgOf<T, D> {
    type State = Track<T, D>;
    #[inline(always)]
    fn element(e: T, index: u64) -> ValueIndex<T> {
        ValueIndex { value: e, index }
    }
    #[inline(always)]
    fn start(first: usize) -> Track<T, D> {
        Track::start(first)
    }
    #[inline(always)]
    fn see(s: &mut Track<T, D>, w: &[u32; 4], i: usize) {
        s.see(w, i)
    }
    #[inline(always)]
    fn see4(s: &mut Track<T, D>, v: &[[u32; 4]; 4], i: usize, stride: usize) {
        s.see4(v, i, stride)
    }
    #[inline(always)]
    fn resolve(s: Track<T, D>, nvec: usize, head: usize, load: impl Fn(usize) -> [u32; 4]) -> ValueIndex<T> {
        s.resolve(nvec, head, load)
    }
    #[inline(always)]
    unsafe fn resolve_in_warp(
        s: Track<T, D>,
        lane: usize,
        nvec: usize,
        head: usize,
        load: impl Fn(usize) -> [u32; 4],
    ) -> ValueIndex<T> {
        s.resolve_in_warp(lane, nvec, head, load)
    }
}

impl<T: ArgElement> ArgFold<T> for ArgMinMax<T> {
    const PREFETCH: bool = false;
    type State = (Track<T, Smallest>, Track<T, Largest>);
    #[inline(always)]
    fn element(e: T, index: u64) -> Self::Acc {
        Pair { min: ValueIndex { value: e, index }, max: ValueIndex { value: e, index } }
    }
    #[inline(always)]
    fn start(first: usize) -> Self::State {
        (Track::start(first), Track::start(first))
    }
    #[inline(always)]
    fn see(s: &mut Self::State, w: &[u32; 4], i: usize) {
        s.0.see(w, i);
        s.1.see(w, i);
    }
    #[inline(always)]
    fn see4(s: &mut Self::State, v: &[[u32; 4]; 4], i: usize, stride: usize) {
        s.0.see4(v, i, stride);
        s.1.see4(v, i, stride);
    }
    #[inline(always)]
    fn resolve(s: Self::State, nvec: usize, head: usize, load: impl Fn(usize) -> [u32; 4]) -> Self::Acc {
        Pair { min: s.0.resolve(nvec, head, &load), max: s.1.resolve(nvec, head, &load) }
    }
    #[inline(always)]
    unsafe fn resolve_in_warp(
        s: Self::State,
        lane: usize,
        nvec: usize,
        head: usize,
        load: impl Fn(usize) -> [u32; 4],
    ) -> Self::Acc {
        Pair {
            min: s.0.resolve_in_warp(lane, nvec, head, &load),
            max: s.1.resolve_in_warp(lane, nvec, head, &load),
        }
    }
}
