//! The device handle and its streams.
//!
//! - [`Gpu`]: one device with the kernels loaded once, `Send + Sync`; share it (`Arc<Gpu>`)
//!   between threads. Its entry points run on its own default stream ([`Gpu`] derefs to it).
//! - [`GpuStream`]: a stream of the library with its own scratch (per-block partials, ticket
//!   counter, flagged slots, a device result slot and a pinned host slot). Every entry point
//!   is a method of it. Two streams never share scratch, so work on them overlaps freely;
//!   calls on one stream from several threads are serialized by the stream's scratch lock.
//!
//! Drop semantics:
//! - Dropping a [`GpuStream`] (or the [`Gpu`], which drops its default stream) first waits for
//!   the stream's queued work, then frees its scratch, then destroys the stream. The loaded
//!   module lives until its last stream and the [`Gpu`] are dropped.
//! - Entry points borrow their inputs and outputs only while they enqueue. A cust
//!   `DeviceBuffer` dropped while a queued kernel still uses it is freed with `cuMemFree`, a
//!   synchronizing call: it waits for the device's work in flight before the memory goes
//!   (tests/gpu_streams drops inputs under queued sgemvs). That wait is device-wide: drop
//!   buffers after a `synchronize` to avoid stalling other streams.
use crate::entries::entry_names;
use crate::error::{alloc, Check, Error, Result};
use crate::image::{ImageChoice, KernelImages, LoadedImage, MIN_COMPUTE_CAPABILITY};
use cust::context::{Context, CurrentContext};
use cust::device::{Device, DeviceAttribute};
use cust::function::{BlockSize, Function};
use cust::memory::{AsyncCopyDestination, DeviceBuffer, DeviceCopy, DevicePointer, DeviceSlice, LockedBuffer};
use cust::module::Module;
use cust::stream::{Stream, StreamFlags};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

/// 64-bit words of the result slots: the largest value call result, a `MinMax<f64>`.
const RESULT_WORDS: usize = 2;
/// The byte a value call's pinned slot holds until the kernel stores the result.
const UNWRITTEN: u8 = 0xa5;
/// How long a value call spins for its result before it waits for the stream instead.
const VALUE_SPIN: std::time::Duration = std::time::Duration::from_micros(20);

/// Whether `e`'s bytes differ from the `UNWRITTEN` pattern.
fn written<E>(e: &E) -> bool {
    // SAFETY: reads the bytes of a plain value.
    let bytes = unsafe { std::slice::from_raw_parts(e as *const E as *const u8, std::mem::size_of::<E>()) };
    bytes.iter().any(|&b| b != UNWRITTEN)
}

/// Initial size of the partials and flagged scratch (in 64-bit words); it grows by doubling.
const INITIAL_SCRATCH_WORDS: usize = 1024;

/// What every handle and stream of one device shares: context, module, kernel table and the
/// device's counts. Immutable after open.
struct Loaded {
    /// Every entry point (`entries::entry_names` order), resolved at open. Declared before
    /// `_module` so it drops first; the `'static` stands for "as long as `_module`".
    functions: Vec<Function<'static>>,
    _module: Module,
    name: String,
    sm_count: u32,
    max_threads_per_sm: u32,
    max_grid_x: u32,
    l2_bytes: usize,
    ordinal: u32,
    /// Unified addressing: kernels can store into pinned host memory at its host address.
    unified: bool,
    compute_capability: (u32, u32),
    image: LoadedImage,
    /// Resident blocks per SM by (entry, block size), from the occupancy calculator; filled
    /// on first use.
    occupancy: Mutex<HashMap<(usize, u32), u32>>,
    context: Context,
}

impl Loaded {
    /// Makes the context current on the calling thread (if it is not already).
    fn bind(&self) -> Result<()> {
        let mut current = std::ptr::null_mut();
        // SAFETY: cuCtxGetCurrent writes one context handle. On failure, set_current reports.
        let ok = unsafe { cust::sys::cuCtxGetCurrent(&mut current) } == cust::sys::CUresult::CUDA_SUCCESS;
        if ok && current == self.context.as_raw() {
            return Ok(());
        }
        CurrentContext::set_current(&self.context).check("cuCtxSetCurrent")
    }
}

impl Drop for Loaded {
    fn drop(&mut self) {
        // The module unloads in this context, whichever thread drops the last reference.
        let _ = self.bind();
    }
}

/// Scratch of one stream, used in that stream's order only (under its lock).
struct Scratch {
    partials: DeviceBuffer<u64>,
    /// Zeroed u32 ticket counter of `finish::LAST_BLOCK` (kernels leave it zero).
    counter: DeviceBuffer<u32>,
    /// Zeroed 64-bit slots of `finish::FLAGGED` (kernels leave them zero).
    flagged: DeviceBuffer<u64>,
    /// Where value calls write their result on the device.
    result: DeviceBuffer<u64>,
    /// Page-locked host copy of `result`.
    host: LockedBuffer<u64>,
    /// Device allocations made so far (for tests: value calls stop allocating once grown).
    allocations: usize,
}

/// A stream of the library with its own scratch; every entry point is a method of it.
/// Obtained from [`Gpu::new_stream`]; [`Gpu`] derefs to its default one.
///
/// `Send + Sync`. Dropping it waits for its queued work before freeing its scratch.
pub struct GpuStream {
    scratch: Mutex<Scratch>,
    stream: Stream,
    shared: Arc<Loaded>,
}

/// One CUDA device with the library's kernels loaded, `Send + Sync`: open it once per
/// device and share it (`Arc<Gpu>`). Entry points (reached through `Deref`) run on the
/// handle's default stream; [`Gpu::new_stream`] gives further streams.
pub struct Gpu {
    default: GpuStream,
}

impl std::ops::Deref for Gpu {
    type Target = GpuStream;
    fn deref(&self) -> &GpuStream {
        &self.default
    }
}

impl Gpu {
    /// Opens device `ordinal` and loads the image of `images` that `choice` picks for it
    /// ([`KernelImages::pick`]). `Error::NoDevice` where there is no device,
    /// `Error::UnsupportedDevice` below compute capability 8.0.
    pub fn new(images: &KernelImages, ordinal: u32, choice: ImageChoice) -> Result<Gpu> {
        cust::init(cust::CudaFlags::empty()).check("cuInit")?;
        if Device::num_devices().check("cuDeviceGetCount")? <= ordinal {
            return Err(Error::NoDevice);
        }
        let device = Device::get_device(ordinal).check("cuDeviceGet")?;
        let context = Context::new(device).check("cuDevicePrimaryCtxRetain")?;
        CurrentContext::set_current(&context).check("cuCtxSetCurrent")?;
        let attr = |a| device.get_attribute(a).check("cuDeviceGetAttribute");
        let compute_capability = (
            attr(DeviceAttribute::ComputeCapabilityMajor)? as u32,
            attr(DeviceAttribute::ComputeCapabilityMinor)? as u32,
        );
        let (major, minor) = compute_capability;
        let image = images
            .pick(choice, major, minor)
            .ok_or(Error::UnsupportedDevice { compute_capability, minimum: MIN_COMPUTE_CAPABILITY })?;
        let module = match image {
            LoadedImage::Cubin { sm } => {
                Module::from_cubin(images.cubin(sm).expect("a picked cubin"), &[]).check("cuModuleLoadData")?
            }
            LoadedImage::Ptx => Module::from_ptx(images.ptx, &[]).check("cuModuleLoadData")?,
        };
        let functions = entry_names()
            .iter()
            .map(|name| {
                let f = module.get_function(name).check("cuModuleGetFunction")?;
                // SAFETY: the handle lives in `Loaded::functions`, which drops before `_module`.
                Ok(unsafe { std::mem::transmute::<Function<'_>, Function<'static>>(f) })
            })
            .collect::<Result<Vec<_>>>()?;
        let shared = Arc::new(Loaded {
            functions,
            sm_count: attr(DeviceAttribute::MultiprocessorCount)? as u32,
            max_threads_per_sm: attr(DeviceAttribute::MaxThreadsPerMultiprocessor)? as u32,
            max_grid_x: attr(DeviceAttribute::MaxGridDimX)? as u32,
            l2_bytes: attr(DeviceAttribute::L2CacheSize)? as usize,
            name: device.name().check("cuDeviceGetName")?,
            ordinal,
            unified: attr(DeviceAttribute::UnifiedAddressing)? == 1,
            compute_capability,
            image,
            occupancy: Mutex::new(HashMap::new()),
            _module: module,
            context,
        });
        Ok(Gpu { default: GpuStream::new(shared)? })
    }

    /// A new stream on this device with its own scratch, sharing the loaded kernels.
    pub fn new_stream(&self) -> Result<GpuStream> {
        GpuStream::new(self.default.shared.clone())
    }

    /// The handle's default stream (also reached through `Deref`).
    pub fn default_stream(&self) -> &GpuStream {
        &self.default
    }
}

impl GpuStream {
    fn new(shared: Arc<Loaded>) -> Result<GpuStream> {
        shared.bind()?;
        let stream = Stream::new(StreamFlags::NON_BLOCKING, None).check("cuStreamCreate")?;
        let host = LockedBuffer::new(&0u64, RESULT_WORDS).check("cuMemAllocHost")?;
        let scratch = Scratch {
            partials: alloc(INITIAL_SCRATCH_WORDS)?,
            counter: alloc(1)?,
            flagged: alloc(INITIAL_SCRATCH_WORDS)?,
            result: alloc(RESULT_WORDS)?,
            host,
            allocations: 4,
        };
        zero_async(&stream, &scratch.counter)?;
        zero_async(&stream, &scratch.flagged)?;
        // A value call copies whole words of the slot; the kernel may write fewer bytes.
        zero_async(&stream, &scratch.result)?;
        Ok(GpuStream { scratch: Mutex::new(scratch), stream, shared })
    }

    pub fn name(&self) -> &str {
        &self.shared.name
    }
    pub fn sm_count(&self) -> u32 {
        self.shared.sm_count
    }
    pub fn max_threads_per_sm(&self) -> u32 {
        self.shared.max_threads_per_sm
    }
    /// The device's largest grid (blocks in x).
    pub fn max_grid_x(&self) -> u32 {
        self.shared.max_grid_x
    }
    pub fn l2_bytes(&self) -> usize {
        self.shared.l2_bytes
    }
    /// The device's ordinal (as `Gpu::new` took it).
    pub fn ordinal(&self) -> u32 {
        self.shared.ordinal
    }
    /// (major, minor).
    pub fn compute_capability(&self) -> (u32, u32) {
        self.shared.compute_capability
    }
    /// The kernel image the device loaded.
    pub fn image(&self) -> LoadedImage {
        self.shared.image
    }
    /// The cust stream, for the caller's own copies and events.
    pub fn stream(&self) -> &Stream {
        &self.stream
    }

    /// Waits for everything enqueued on this stream; reports kernel faults.
    pub fn synchronize(&self) -> Result<()> {
        self.stream.synchronize().check("cuStreamSynchronize")
    }

    /// Device allocations of this stream's scratch so far. Once the scratch has grown to a
    /// workload, further calls allocate nothing.
    pub fn scratch_allocations(&self) -> usize {
        self.lock().map(|g| g.scratch.allocations).unwrap_or(0)
    }

    /// Blocks of `block` threads of entry point `entry` one SM holds at once (registers and
    /// shared memory included), from the driver's occupancy calculator; cached per device.
    pub(crate) fn blocks_per_sm(&self, entry: usize, block: u32) -> Result<u32> {
        let mut cache = self.shared.occupancy.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(&blocks) = cache.get(&(entry, block)) {
            return Ok(blocks);
        }
        self.shared.bind()?;
        let blocks = self.shared.functions[entry]
            .max_active_blocks_per_multiprocessor(BlockSize::x(block), 0)
            .check("cuOccupancyMaxActiveBlocksPerMultiprocessor")?
            .max(1);
        cache.insert((entry, block), blocks);
        Ok(blocks)
    }

    /// Threads of entry point `entry` one SM really keeps resident in blocks of `block`
    /// (registers may allow fewer than max_threads_per_sm): what launch plans count.
    pub(crate) fn resident_threads(&self, entry: usize, block: u32) -> Result<u32> {
        Ok((self.blocks_per_sm(entry, block)? * block).min(self.max_threads_per_sm()))
    }

    /// Makes this device's context current on the calling thread (for the caller's own
    /// allocations and copies, e.g. before `DeviceBuffer::from_slice` on a second device).
    pub fn bind(&self) -> Result<()> {
        self.shared.bind()
    }

    /// Binds the context to this thread and takes the stream's scratch lock: the caller then
    /// enqueues in stream order. A poisoned lock is taken anyway (the scratch stays valid).
    pub(crate) fn lock(&self) -> Result<Enqueue<'_>> {
        self.shared.bind()?;
        let scratch = self.scratch.lock().unwrap_or_else(|e| e.into_inner());
        Ok(Enqueue { stream: self, scratch })
    }
}

impl Drop for GpuStream {
    fn drop(&mut self) {
        // Queued kernels may still use the scratch: wait before it is freed (in this context).
        let _ = self.shared.bind();
        let _ = self.stream.synchronize();
    }
}

/// Zeroes `buffer` on `stream` (stream-ordered, so no device-wide wait).
fn zero_async<T: DeviceCopy>(stream: &Stream, buffer: &DeviceBuffer<T>) -> Result<()> {
    let bytes = buffer.len() * std::mem::size_of::<T>();
    memset_zero(stream, buffer.as_device_ptr().as_raw(), bytes)
}

fn memset_zero(stream: &Stream, ptr: u64, bytes: usize) -> Result<()> {
    // SAFETY: callers pass a live allocation of at least `bytes` bytes.
    let mut bytes_view = unsafe { DeviceSlice::from_raw_parts_mut(DevicePointer::<u8>::from_raw(ptr), bytes) };
    // SAFETY: the memset runs in stream order before any later use of the memory.
    unsafe { bytes_view.set_zero_async(stream) }.check("cuMemsetD8Async")
}

/// A stream with its scratch locked: what an entry point enqueues through.
pub(crate) struct Enqueue<'a> {
    stream: &'a GpuStream,
    scratch: MutexGuard<'a, Scratch>,
}

impl<'a> Enqueue<'a> {
    pub(crate) fn gpu(&self) -> &GpuStream {
        self.stream
    }

    /// Launches entry point `entry` (an `entries` index) with the raw argument words `args`.
    pub(crate) fn launch(&self, entry: usize, grid: u32, block: u32, args: &[&dyn KernelArg]) -> Result<()> {
        assert!(args.len() <= MAX_KERNEL_ARGS, "a kernel takes at most {} parameters", MAX_KERNEL_ARGS);
        let function = &self.stream.shared.functions[entry];
        let mut ptrs = [std::ptr::null_mut(); MAX_KERNEL_ARGS];
        for (p, a) in ptrs.iter_mut().zip(args) {
            *p = a.as_arg_ptr();
        }
        // SAFETY: the callers pass exactly the kernel's parameters, in order, with device
        // pointers they validated; the launch result is checked, faults surface at the next sync.
        unsafe { self.stream.stream.launch(function, grid, block, 0, &ptrs[..args.len()]) }.check("cuLaunchKernel")
    }

    /// A device pointer to `bytes` of scratch for per-block partials.
    pub(crate) fn partials(&mut self, bytes: usize) -> Result<u64> {
        let words = (bytes + 7) / 8;
        if self.scratch.partials.len() < words {
            self.grow_wait()?;
            self.scratch.partials = alloc(words.next_power_of_two())?;
            self.scratch.allocations += 1;
        }
        Ok(self.scratch.partials.as_device_ptr().as_raw())
    }

    /// A device pointer to `slots` zeroed 64-bit slots for `finish::FLAGGED`.
    pub(crate) fn flagged_slots(&mut self, slots: usize) -> Result<u64> {
        if self.scratch.flagged.len() < slots {
            self.grow_wait()?;
            self.scratch.flagged = alloc(slots.next_power_of_two())?;
            self.scratch.allocations += 1;
            zero_async(&self.stream.stream, &self.scratch.flagged)?;
        }
        Ok(self.scratch.flagged.as_device_ptr().as_raw())
    }

    /// Before a scratch buffer is replaced: queued kernels may still use the old one.
    fn grow_wait(&self) -> Result<()> {
        self.stream.synchronize()
    }

    /// The zeroed ticket counter of `finish::LAST_BLOCK`.
    pub(crate) fn counter(&self) -> u64 {
        self.scratch.counter.as_device_ptr().as_raw()
    }

    /// Enqueues zeroing the first `bytes` at `ptr` (a sum over nothing, or an atomic start).
    pub(crate) fn zero(&self, ptr: u64, bytes: usize) -> Result<()> {
        memset_zero(&self.stream.stream, ptr, bytes)
    }

    /// Where a value call's kernel writes its result: with `direct` (a kernel that stores its
    /// final result once, at its end) and unified addressing, the pinned host slot itself,
    /// filled first with `UNWRITTEN` bytes so that [`Enqueue::read_value`] sees the store land;
    /// otherwise the device result slot (`RESULT_WORDS` words), copied after.
    pub(crate) fn value_slot(&mut self, direct: bool) -> u64 {
        if direct && self.stream.shared.unified {
            let slot = self.scratch.host.as_mut_ptr() as *mut u8;
            for i in 0..RESULT_WORDS * 8 {
                // SAFETY: within the pinned slot, which no queued kernel writes (the last value
                // call's kernel wrote it once, and its value was read).
                unsafe { std::ptr::write_volatile(slot.add(i), UNWRITTEN) };
            }
            slot as u64
        } else {
            self.scratch.result.as_device_ptr().as_raw()
        }
    }

    /// The value call's `K` results of type `E` from [`Enqueue::value_slot`]`(direct)`. Where the
    /// kernel stores into the pinned slot, the host spins until every element differs from the
    /// `UNWRITTEN` pattern (each is written once, with its final value, after the kernel has
    /// read all its input), for at most `VALUE_SPIN`; then, or where a result may equal the
    /// pattern, or for a copied result, it waits for the stream.
    pub(crate) fn read_value<E: Copy, const K: usize>(&mut self, direct: bool) -> Result<[E; K]> {
        let words = (K * std::mem::size_of::<E>() + 7) / 8;
        assert!(words <= RESULT_WORDS, "a value call result is at most {} words", RESULT_WORDS);
        let slot = self.scratch.host.as_ptr() as *const E;
        // SAFETY (both reads): the pinned slot is 8-byte aligned and holds `words` words; E is a
        // plain value type (integers, floats), so any bytes are a valid E.
        let read = || -> [E; K] {
            let mut v = [unsafe { std::ptr::read_volatile(slot) }; K];
            for (k, e) in v.iter_mut().enumerate().skip(1) {
                *e = unsafe { std::ptr::read_volatile(slot.add(k)) };
            }
            v
        };
        if direct && self.stream.shared.unified {
            let start = std::time::Instant::now();
            let mut spins = 0u32;
            loop {
                let v = read();
                if v.iter().all(|e| written(e)) {
                    return Ok(v);
                }
                spins = spins.wrapping_add(1);
                if spins % 256 == 0 && start.elapsed() > VALUE_SPIN {
                    break;
                }
                std::hint::spin_loop();
            }
        } else {
            let scratch = &mut *self.scratch;
            // SAFETY: both slots live as long as the stream; the copy is waited for below.
            unsafe { scratch.result.index(..words).async_copy_to(&mut scratch.host[..words], &self.stream.stream) }
                .check("cuMemcpyDtoHAsync")?;
        }
        self.stream.synchronize()?;
        Ok(read())
    }

    /// Waits for this stream, then copies `len` elements at `ptr` to the host.
    pub(crate) fn read_back<T: DeviceCopy + Default + Copy>(&self, ptr: u64, len: usize) -> Result<Vec<T>> {
        let mut host = vec![T::default(); len];
        self.stream.synchronize()?;
        // SAFETY: callers pass `len` elements of T they wrote on this stream.
        let src = unsafe { DeviceSlice::from_raw_parts(DevicePointer::<T>::from_raw(ptr), len) };
        cust::memory::CopyDestination::copy_to(&src, &mut host[..]).check("cuMemcpyDtoH")?;
        Ok(host)
    }
}

/// Most parameters any kernel takes (sgemv's `&[f32]`s count two each).
const MAX_KERNEL_ARGS: usize = 16;

/// A value passed to a kernel by address (cust's launch convention).
pub(crate) trait KernelArg {
    fn as_arg_ptr(&self) -> *mut std::ffi::c_void;
}
impl<T: DeviceCopy> KernelArg for T {
    fn as_arg_ptr(&self) -> *mut std::ffi::c_void {
        self as *const T as *mut std::ffi::c_void
    }
}

/// The device address and length of a slice: how a kernel's `&[T]` parameter is passed.
pub(crate) fn raw<T: DeviceCopy>(s: &DeviceSlice<T>) -> (u64, usize) {
    (s.as_device_ptr().as_raw(), s.len())
}
