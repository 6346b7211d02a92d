//! The zero fill the entry points clear outputs with: every byte of the range zeroed and none
//! outside it, at every alignment of its start and end, from 0 bytes to past 2^29.
mod common;
use common::{download, gpu, upload_on, Rng};
use cudakernels::cust::memory::DeviceBuffer;
use cudakernels::GpuStream;

/// Bytes kept untouched on both sides of every range.
const GUARD: usize = 64;

/// `len` + 2·GUARD bytes of random nonzero poison, uploaded in `s`'s order.
fn poisoned(s: &GpuStream, rng: &mut Rng, len: usize) -> (DeviceBuffer<u8>, Vec<u8>) {
    let host: Vec<u8> = (0..len + 2 * GUARD).map(|_| (rng.next_u64() as u8) | 1).collect();
    (upload_on(s, &host), host)
}

/// Zeroes `len` bytes from byte `GUARD + shift` of a poisoned buffer and checks every byte.
fn check_fill(s: &GpuStream, rng: &mut Rng, shift: usize, len: usize) {
    let (buf, mut want) = poisoned(s, rng, len + shift);
    let start = buf.as_device_ptr().as_raw() + (GUARD + shift) as u64;
    // SAFETY: the range lies inside `buf` (GUARD bytes past its end), which outlives the fill:
    // `download` waits for the stream.
    unsafe { s.zero_bytes_raw(start, len) }.expect("fill");
    let got = download(s, &buf);
    want[GUARD + shift..GUARD + shift + len].iter_mut().for_each(|b| *b = 0);
    if let Some(i) = got.iter().zip(&want).position(|(g, w)| g != w) {
        panic!(
            "seed {}: {} bytes at start mod 16 = {}: byte {} (range from {}) is {:#x}, want {:#x}",
            rng.seed,
            len,
            (start % 16),
            i,
            GUARD + shift,
            got[i],
            want[i]
        );
    }
}

#[test]
fn every_alignment_and_length_is_zeroed_exactly() {
    let gpu = match gpu("every_alignment_and_length_is_zeroed_exactly") {
        Some(g) => g,
        None => return,
    };
    let s = gpu.default_stream();
    let mut rng = Rng::fresh("fill");
    let lens = [0, 1, 2, 15, 16, 17, 31, 32, 33, 47, 255, 1023, 1024 * 16 - 1, 1024 * 16, 1024 * 16 + 1, 100_003];
    for shift in 0..17 {
        for &len in &lens {
            check_fill(s, &mut rng, shift, len);
        }
    }
    // 2^25 vectors after an 8-byte head, a grid of 2^15 blocks, and a 5-byte tail.
    check_fill(s, &mut rng, 8, (1 << 29) + 13);
}
