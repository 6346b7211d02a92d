//! Buffers lent to a call are checked before any kernel is launched: host memory, unknown
//! addresses and misaligned views (all built with unsafe code) get typed errors, launch
//! nothing, and leave the stream working.
mod common;
use common::{download, gpu, upload, Rng};
use cudakernels::cust::memory::{DeviceCopy, DevicePointer, DeviceSlice, LockedBuffer};
use cudakernels::{Error, GpuStream, ReduceStrategy, SgemvOptions, TypedOp};

/// A device slice of `len` `T` at `address`, which may be no device memory at all.
///
/// # Safety
/// The slice is only lent to calls that must refuse it; nothing dereferences it.
unsafe fn view<T: DeviceCopy>(address: u64, len: usize) -> DeviceSlice<T> {
    DeviceSlice::from_raw_parts(DevicePointer::from_raw(address), len)
}

fn not_device<T>(what: &'static str, address: u64) -> Result<T, Error> {
    Err(Error::NotDeviceMemory { what, address })
}

fn misaligned<T>(what: &'static str, required: usize, address: u64) -> Result<T, Error> {
    Err(Error::Misaligned { what, required, address })
}

/// The stream still computes exactly after the refusals (a launched kernel on a bad address
/// would have faulted the context).
fn still_works(s: &GpuStream, rng: &mut Rng) {
    s.synchronize().expect("no fault is pending");
    let host: Vec<u32> = (0..65_537).map(|_| rng.next_u64() as u32).collect();
    let x = upload(&host);
    assert_eq!(s.sum(&x).unwrap(), host.iter().map(|&v| v as u64).sum::<u64>(), "seed {}", rng.seed);
}

#[test]
fn host_memory_and_unknown_addresses_get_not_device_memory_and_launch_nothing() {
    let gpu = match gpu("host_memory_and_unknown_addresses_get_not_device_memory_and_launch_nothing") {
        Some(g) => g,
        None => return,
    };
    let mut rng = Rng::fresh("not_device_memory");
    let s = gpu.default_stream();
    let (heap, stack, locked) = (vec![1u32; 4096], [1.0f32; 64], LockedBuffer::new(&1u32, 4096).unwrap());
    let (mut out_host, mut y_host) = ([0u64; 1], [f32::NAN; 4]);
    let (heap_at, stack_at, locked_at) = (heap.as_ptr() as u64, stack.as_ptr() as u64, locked.as_ptr() as u64);
    let (out_at, y_at) = (out_host.as_mut_ptr() as u64, y_host.as_mut_ptr() as u64);
    // SAFETY: views of host memory and of an unmapped page, lent to calls that must refuse them
    // (the page-locked one to a call that reads it); the host arrays outlive them.
    let (heap_view, heap_f32, stack_view, locked_view, unknown, mut host_out, mut host_y) = unsafe {
        (
            view::<u32>(heap_at, 4096),
            view::<f32>(heap_at, 4096),
            view::<f32>(stack_at, 64),
            view::<u32>(locked_at, 4096),
            view::<u32>(0x1000, 1024),
            view::<u64>(out_at, 1),
            view::<f32>(y_at, 4),
        )
    };
    assert_eq!(s.sum(&heap_view), not_device("input", heap_at), "pageable heap memory");
    assert_eq!(s.reduce_sum(&stack_view, ReduceStrategy::Auto), not_device("input", stack_at), "a stack array");
    // Page-locked host memory is reachable from the device (unified addressing): accepted.
    assert_eq!(s.max(&locked_view), Ok(1), "page-locked host memory");
    assert_eq!(s.minmax(&unknown), not_device("input", 0x1000), "an unmapped address");

    let x = upload(&[3u32; 4096]);
    let (mut out, mut f32_out) = (upload(&[u64::MAX]), upload(&[f32::NAN]));
    assert_eq!(s.sum_into(&x, &mut host_out), not_device("out", out_at), "an output on the host");
    assert_eq!(s.sum_into(&heap_view, &mut out), not_device("input", heap_at));
    assert_eq!(s.reduce_sum_into(&heap_f32, &mut f32_out, ReduceStrategy::Auto), not_device("input", heap_at));
    let (a, xs) = (upload(&[1.0f32; 32]), upload(&[1.0f32; 8]));
    let mut y = upload(&[f32::NAN; 4]);
    let opts = SgemvOptions::default();
    assert_eq!(s.sgemv(4, 8, &heap_f32.index(..32), &xs, &mut y, opts), not_device("A", heap_at));
    assert_eq!(s.sgemv(4, 8, &a, &xs, &mut host_y, opts), not_device("y", y_at));

    assert_eq!(out_host, [0], "nothing wrote the host output");
    assert!(y_host.iter().all(|v| v.is_nan()), "nothing wrote the host y");
    assert_eq!(download(s, &out), vec![u64::MAX], "nothing wrote the poisoned output");
    assert!(download(s, &f32_out)[0].is_nan(), "nothing wrote the poisoned output");
    assert!(download(s, &y).iter().all(|v| v.is_nan()), "nothing wrote y");
    still_works(s, &mut rng);
}

#[test]
fn a_view_off_its_element_alignment_gets_misaligned_and_launches_nothing() {
    let gpu = match gpu("a_view_off_its_element_alignment_gets_misaligned_and_launches_nothing") {
        Some(g) => g,
        None => return,
    };
    let mut rng = Rng::fresh("misaligned");
    let s = gpu.default_stream();
    let bytes = upload(&vec![3u8; 8 * 1024 + 8]);
    let base = bytes.as_device_ptr().as_raw();
    // SAFETY: views inside `bytes`, which outlives them, only lent to calls that must refuse them.
    let (odd, halfway, shifted, words, mut aligned_out, mut out, mut y) = unsafe {
        (
            view::<u32>(base + 1, 1024),
            view::<f64>(base + 4, 1024),
            view::<f32>(base + 2, 1024),
            view::<i16>(base + 3, 1024),
            view::<i16>(base, 1),
            view::<u64>(base + 4, 1),
            view::<f32>(base + 1, 4),
        )
    };
    assert_eq!(s.sum(&odd), misaligned("input", 4, base + 1), "a u32 view at an odd byte");
    assert_eq!(s.minmax(&halfway), misaligned("input", 8, base + 4), "an f64 view at 4 bytes");
    assert_eq!(s.reduce_sum(&shifted, ReduceStrategy::Auto), misaligned("input", 4, base + 2));
    assert_eq!(s.reduce_into(TypedOp::Min, &words, &mut aligned_out), misaligned("input", 2, base + 3));
    let x = upload(&[5u32; 1000]);
    assert_eq!(s.sum_into(&x, &mut out), misaligned("out", 8, base + 4), "a u64 output at 4 bytes");
    let a = upload(&[1.0f32; 32]);
    assert_eq!(s.sgemv(4, 8, &a, &a.index(..8), &mut y, SgemvOptions::default()), misaligned("y", 4, base + 1));
    assert_eq!(download(s, &bytes), vec![3u8; 8 * 1024 + 8], "nothing wrote the bytes under the views");
    still_works(s, &mut rng);
}
