//! Split-K for wide rows that float4 loads cannot take as they lie (A, x or lda not 16-byte
//! aligned): a chunk of a row is read with aligned float4 loads from the float4 that holds its
//! first column, and each quad's four x values come from two aligned x quads shifted into
//! place. The shift is one for the whole chunk, so the loop is compiled once per shift. The
//! chunk's ragged ends go float by float. Limits: as split-K (`chunk % 4 == 0`).
use super::problem::Gemv;
use super::split_k::{chunk_of, finish};
use crate::thread::{dot4, load_v4};
use cuda_std::thread::{block_dim_x, thread_idx_x};

/// One chunk: A's and x's floats from the float4s holding their first column.
struct Chunk {
    /// A's float4s; column j of the chunk is float `sa + j`.
    a: *const [u32; 4],
    sa: usize,
    /// x's float4s; column j is float `sx + j`.
    x: *const [u32; 4],
    sx: usize,
    len: usize,
}

impl Chunk {
    /// Quad `q` of A against its x (`D` = (sx - sa) mod 4), for a quad whose floats all lie in
    /// the chunk and whose x float4s end within it.
    #[inline(always)]
    unsafe fn vector_dot<const D: usize>(&self, q: usize) -> f32 {
        // Column of the quad's first float, and x's float4 that holds it.
        let col = 4 * q - self.sa;
        let xq = (self.sx + col) / 4;
        let xa = load_v4(self.x.add(xq));
        let xb = if D > 0 { load_v4(self.x.add(xq + 1)) } else { xa };
        let at = |i: usize| if i < 4 { xa[i] } else { xb[i - 4] };
        dot4(load_v4(self.a.add(q)), [at(D), at(D + 1), at(D + 2), at(D + 3)])
    }

    /// Quad `q` of A float by float, columns outside the chunk skipped.
    #[inline(always)]
    unsafe fn scalar_dot(&self, q: usize) -> f32 {
        let (a, x) = (self.a as *const f32, self.x as *const f32);
        let mut acc = 0.0f32;
        for e in 0..4 {
            let f = 4 * q + e;
            if f >= self.sa && f < self.sa + self.len {
                acc += *a.add(f) * *x.add(self.sx + f - self.sa);
            }
        }
        acc
    }

    /// This thread's share of the chunk: interior quads `first + tid`, `+ step`, … with four in
    /// flight, then the ragged quads (before `first` and from `end` on), one per thread.
    #[inline(always)]
    unsafe fn dot<const D: usize>(&self) -> f32 {
        let (tid, step) = (thread_idx_x() as usize, block_dim_x() as usize);
        let quads = (self.sa + self.len + 3) / 4;
        // Interior quads: A's quad inside the chunk and, with D > 0, x's second quad too:
        // quad q reads x's float4s q + k and q + k + 1, k = -1 when sx < sa, else 0.
        let first = core::cmp::min((self.sa + 3) / 4, quads);
        let mut end = (self.sa + self.len) / 4;
        if D > 0 {
            let x_quads = (self.sx + self.len) / 4 + (self.sx < self.sa) as usize;
            end = core::cmp::min(end, x_quads.saturating_sub(1));
        }
        let end = core::cmp::max(first, end);
        let mut acc = 0.0f32;
        let mut q = first + tid;
        while q + 3 * step < end {
            let d = [
                self.vector_dot::<D>(q),
                self.vector_dot::<D>(q + step),
                self.vector_dot::<D>(q + 2 * step),
                self.vector_dot::<D>(q + 3 * step),
            ];
            acc += d[0] + d[1] + d[2] + d[3];
            q += 4 * step;
        }
        while q < end {
            acc += self.vector_dot::<D>(q);
            q += step;
        }
        let ragged = first + (quads - end);
        if tid < ragged {
            acc += self.scalar_dot(if tid < first { tid } else { end + tid - first });
        }
        acc
    }
}

/// Thread mapping: as split-K; thread t reads interior quads t, t + B, … of its chunk.
pub unsafe fn rows(g: Gemv, chunk: usize, partials: *mut f32, counters: *mut u32) {
    let (row, start, len) = chunk_of(&g, chunk);
    let (a, x) = (g.a.add(row * g.lda + start), g.x.add(start));
    let (sa, sx) = ((a as usize % 16) / 4, (x as usize % 16) / 4);
    let c = Chunk { a: a.sub(sa) as *const [u32; 4], sa, x: x.sub(sx) as *const [u32; 4], sx, len };
    let acc = match (4 + sx - sa) % 4 {
        0 => c.dot::<0>(),
        1 => c.dot::<1>(),
        2 => c.dot::<2>(),
        _ => c.dot::<3>(),
    };
    finish(&g, acc, partials, counters);
}
