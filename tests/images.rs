//! The embedded kernel images: what they are (everywhere), that the committed ones are what the
//! source builds to (with `from-source`), and which one a device loads (on a GPU).
mod common;

use cudakernels::config::SASS_ARCHES;
use cudakernels::{Cubin, ImageChoice, LoadedImage, IMAGES};

#[test]
fn embedded_cubins_are_sass_for_their_architectures() {
    let sms: Vec<u32> = IMAGES.cubins.iter().map(|c| c.sm).collect();
    assert_eq!(sms, SASS_ARCHES.to_vec());
    for c in IMAGES.cubins {
        assert_eq!(Cubin::arch_of(c.image), Some(c.sm), "the cubin listed for sm_{} is not SASS for it", c.sm);
    }
    assert!(IMAGES.ptx.contains(".target sm_80"));
    assert_eq!(Cubin::arch_of(IMAGES.ptx.as_bytes()), None, "PTX is text, not a cubin");
}

#[test]
fn a_device_picks_its_cubin_else_the_ptx() {
    let auto = |major, minor| IMAGES.pick(ImageChoice::Auto, major, minor);
    for &sm in SASS_ARCHES.iter() {
        assert_eq!(auto(sm / 10, sm % 10), Some(LoadedImage::Cubin { sm }));
        assert_eq!(IMAGES.pick(ImageChoice::Ptx, sm / 10, sm % 10), Some(LoadedImage::Ptx));
    }
    // SASS runs on later minor versions of its major version, never across major versions.
    for &minor in [6, 7, 9].iter() {
        assert_eq!(auto(8, minor), Some(LoadedImage::Cubin { sm: 80 }));
    }
    assert_eq!(auto(9, 1), Some(LoadedImage::Cubin { sm: 90 }));
    assert_eq!(auto(10, 0), Some(LoadedImage::Ptx));
    assert_eq!(auto(12, 0), Some(LoadedImage::Ptx));
    // The PTX targets sm_80: older devices cannot run any image.
    assert_eq!(auto(7, 5), None);
    assert_eq!(IMAGES.pick(ImageChoice::Ptx, 6, 1), None);
}

/// With `from-source`, the images come from the kernels just built: the committed ones must be
/// the same to the byte (ptxas output is byte-stable), or `./x images` was not run. The PTX
/// depends on the source alone (see `the_ptx_names_nothing_by_a_build_hash`), so this holds
/// wherever the toolchain, the crates and the clone lie.
#[cfg(feature = "from-source")]
#[test]
fn committed_images_are_what_the_source_builds_to() {
    let committed = cudakernels::COMMITTED_IMAGES;
    assert!(
        committed.ptx == IMAGES.ptx,
        "kernels/images/kernels.ptx differs from the PTX built from kernels/ ({}): run `./x images` and commit kernels/images/",
        first_difference(committed.ptx, IMAGES.ptx)
    );
    for (built, kept) in IMAGES.cubins.iter().zip(committed.cubins) {
        assert!(
            built.image == kept.image,
            "kernels/images/kernels.sm_{}.cubin differs from the cubin built from kernels/: run `./x images` and commit kernels/images/",
            built.sm
        );
    }
}

/// Where two texts first differ: the line number and both lines.
#[cfg(feature = "from-source")]
fn first_difference(committed: &str, built: &str) -> String {
    let (mut a, mut b) = (committed.lines(), built.lines());
    for line in 1.. {
        match (a.next(), b.next()) {
            (Some(x), Some(y)) if x == y => continue,
            (None, None) => break,
            (x, y) => return format!("line {}: committed {:?}, built {:?}", line, x, y),
        }
    }
    "they differ in line endings only".into()
}

/// rustc mangles a name with a hash of the crate's build metadata (`17h` + 16 hex digits + `E`),
/// which cargo derives partly from where the toolchain's sources lie on disk. No PTX symbol may
/// carry one, or the images would differ between machines.
#[test]
fn the_ptx_names_nothing_by_a_build_hash() {
    let ptx = IMAGES.ptx.as_bytes();
    let hashed: Vec<String> = (0..ptx.len().saturating_sub(20))
        .filter(|&i| {
            ptx[i..i + 3] == *b"17h" && ptx[i + 3..i + 19].iter().all(u8::is_ascii_hexdigit) && ptx[i + 19] == b'E'
        })
        .map(|i| String::from_utf8_lossy(&ptx[i.saturating_sub(60)..i + 20]).into_owned())
        .collect();
    assert!(hashed.is_empty(), "mangled names with a build hash in the PTX: {:?}", hashed);
    assert!(IMAGES.ptx.contains(".shared"), "the kernels' shared arrays are in the PTX");
}

/// Sums fresh random bytes on `gpu` and compares with the CPU, exactly.
fn sums_bytes_exactly(gpu: &cudakernels::GpuStream, test: &str) {
    let mut rng = common::Rng::fresh(test);
    let host: Vec<u8> = (0..(1 << 20) + 7).map(|_| rng.next_u64() as u8).collect();
    let dev = common::upload(&host);
    let expected: u64 = host.iter().map(|&b| b as u64).sum();
    assert_eq!(gpu.sum(&dev).unwrap(), expected, "seed {}", rng.seed);
    let (lo, hi) = (host.iter().min().unwrap(), host.iter().max().unwrap());
    assert_eq!(gpu.minmax(&dev).unwrap(), (*lo, *hi), "seed {}", rng.seed);
}

#[test]
fn open_loads_the_cubin_for_this_device() {
    let gpu = match common::gpu("open_loads_the_cubin_for_this_device") {
        Some(gpu) => gpu,
        None => return,
    };
    let (major, minor) = gpu.compute_capability();
    let expected = IMAGES.pick(ImageChoice::Auto, major, minor).expect("a supported device");
    assert_eq!(gpu.image(), expected, "{} (compute capability {}.{})", gpu.name(), major, minor);
    if SASS_ARCHES.contains(&(10 * major + minor)) {
        assert_eq!(gpu.image(), LoadedImage::Cubin { sm: 10 * major + minor });
    }
    eprintln!("{} (compute capability {}.{}) loaded {:?}", gpu.name(), major, minor, gpu.image());
    sums_bytes_exactly(gpu.default_stream(), "open_loads_the_cubin_for_this_device");
}

#[test]
fn the_ptx_fallback_loads_and_computes() {
    let gpu = match common::gpu_with("the_ptx_fallback_loads_and_computes", ImageChoice::Ptx) {
        Some(gpu) => gpu,
        None => return,
    };
    assert_eq!(gpu.image(), LoadedImage::Ptx);
    sums_bytes_exactly(gpu.default_stream(), "the_ptx_fallback_loads_and_computes");
}
