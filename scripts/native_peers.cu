// Native C++ peers for the cudakernels benchmarks, compiled on the GPU machine by the runner:
//   /usr/local/cuda/bin/nvcc -O3 -std=c++17 -arch=sm_XX -o native_peers native_peers.cu
//   (sgemv needs -lcublas)
// Usage: ./native_peers [--shapes PATH] [--axis-shapes PATH] [--gemv PATH]
//          [value|arg|sgemv|half|axis|batched|hgemv]...   (sections; all by default). Prints
// markdown tables; with BENCH_CSV_DIR set, sgemv also writes sgemv_cublas.csv there. --shapes is
// the sgemv shapes file (default data/sgemv_shapes.csv, from the working directory), --axis-shapes
// the axis shapes (default data/axis_shapes.csv), --gemv the decoding shapes (default
// data/gemv_shapes.csv).
//   value  a value to the host: cub::DeviceReduce::Sum into a device word, cudaMemcpyAsync into
//          pinned memory on the same stream, cudaStreamSynchronize; host clock per call, median
//          and mean of VALUE_CALLS calls (the bench's "value to the host" section times the same).
//   arg    cub::DeviceReduce::ArgMax and ArgMin at 2^28 bytes per input (u8, i32, f32, __half,
//          __nv_bfloat16; cold: inputs rotated past 4x L2; CUDA events, median of REPS), and the LLM
//          case: ArgMax of 128,256 bf16 logits + one cudaMemcpyAsync of value and index to pinned
//          memory + cudaStreamSynchronize, host clock per call (the bench's "arg" section). Every
//          result is checked against a host reference (first index of the extreme).
//   sgemv  cublasSgemv on the bench's shapes (set "bench" of the shapes file), both ops, A row-major
//          m x n = column-major n x m: Op::N is CUBLAS_OP_T on it, Op::T is CUBLAS_OP_N. CUDA
//          events per call, median of REPS after WARMUP_REPS, cold (A rotated through buffers
//          totalling >= 4x L2), pipelined (QUEUED calls between one event pair), hot.
//   half   f16 and bf16 at 2^28 bytes, cold (inputs rotated past L2), CUDA events, median of REPS
//          after WARMUP_REPS: cub::DeviceReduce::TransformReduce converting each half to float
//          (the sum in f32, the library's and x.sum(dtype=torch.float32)'s), DeviceReduce::Min
//          and Max; checked against a host reference.
//   axis   cub::DeviceSegmentedReduce Sum, Max and ArgMax over the rows of the dense shapes and
//          the ragged segments of the axis shapes file (default data/axis_shapes.csv), float and
//          bfloat16, cold; offsets as an int array (begin = offsets, end = offsets + 1); inputs
//          uniform in [0, 1), the bench's own (axis_value).
//   batched  cublasSgemvStridedBatched on the attention decode shapes (set "attention" of --gemv),
//          both ops, cold (A rotated past L2), as bin/bench's batched section.
//   hgemv  bf16 then f16 A and x, as bin/bench's hgemv section: cublasGemmEx (n = 1, x and y of
//          A's type, f32 compute) on the Llama projections (set "llama"), the strided-batched
//          gemv with y of A's type (TST, HSH) and f32 y (TSS, HSS) on every shape; both ops, cold.
// Every CUDA and cuBLAS call is checked.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cub/cub.cuh>
#include <cuda/std/functional>
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <numeric>
#include <string>
#include <vector>

#define CHECK(call)                                                                            \
    do {                                                                                       \
        cudaError_t e_ = (call);                                                               \
        if (e_ != cudaSuccess) {                                                               \
            std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,          \
                         cudaGetErrorString(e_));                                              \
            std::exit(1);                                                                      \
        }                                                                                      \
    } while (0)

#define CHECK_BLAS(call)                                                                       \
    do {                                                                                       \
        cublasStatus_t s_ = (call);                                                            \
        if (s_ != CUBLAS_STATUS_SUCCESS) {                                                     \
            std::fprintf(stderr, "%s:%d: %s failed: status %d\n", __FILE__, __LINE__, #call,   \
                         int(s_));                                                             \
            std::exit(1);                                                                      \
        }                                                                                      \
    } while (0)

static const int VALUE_CALLS = 5000;
static const int WARMUP = 100;

struct Stats {
    double median_us, mean_us;
};

static Stats stats(std::vector<double> us) {
    std::sort(us.begin(), us.end());
    double mean = std::accumulate(us.begin(), us.end(), 0.0) / us.size();
    return {us[us.size() / 2], mean};
}

// Host microseconds of each of `calls` calls of f, after WARMUP untimed ones.
template <class F>
static Stats time_calls(F f, int calls) {
    for (int i = 0; i < WARMUP; ++i) f();
    std::vector<double> us(calls);
    for (int i = 0; i < calls; ++i) {
        auto t0 = std::chrono::steady_clock::now();
        f();
        us[i] = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
    }
    return stats(us);
}

static void value_section(cudaStream_t stream) {
    std::printf("\n### native: value to the host (host clock per call, median and mean of %d)\n\n", VALUE_CALLS);
    std::printf("| what | n | median µs | mean µs | check |\n|---|---|---|---|---|\n");
    for (int p : {12, 20}) {
        size_t n = size_t(1) << p;
        std::vector<float> host(n);
        double want = 0;
        for (size_t i = 0; i < n; ++i) {
            host[i] = float(int(i % 7) - 3);  // small integers: every order sums exactly
            want += host[i];
        }
        float *d_in = nullptr, *d_out = nullptr, *h_out = nullptr;
        CHECK(cudaMalloc(&d_in, n * sizeof(float)));
        CHECK(cudaMalloc(&d_out, sizeof(float)));
        CHECK(cudaMallocHost(&h_out, sizeof(float)));
        CHECK(cudaMemcpyAsync(d_in, host.data(), n * sizeof(float), cudaMemcpyHostToDevice, stream));
        size_t temp_bytes = 0;
        CHECK(cub::DeviceReduce::Sum(nullptr, temp_bytes, d_in, d_out, int(n), stream));
        void *temp = nullptr;
        CHECK(cudaMalloc(&temp, temp_bytes));
        CHECK(cudaStreamSynchronize(stream));
        *h_out = NAN;
        auto call = [&] {
            CHECK(cub::DeviceReduce::Sum(temp, temp_bytes, d_in, d_out, int(n), stream));
            CHECK(cudaMemcpyAsync(h_out, d_out, sizeof(float), cudaMemcpyDeviceToHost, stream));
            CHECK(cudaStreamSynchronize(stream));
        };
        Stats s = time_calls(call, VALUE_CALLS);
        float got = *h_out;
        bool ok = double(got) == want;
        std::printf("| cub::DeviceReduce::Sum + cudaMemcpyAsync (pinned) + cudaStreamSynchronize | 2^%d | %.2f | "
                    "%.2f | %s |\n",
                    p, s.median_us, s.mean_us, ok ? "ok" : "FAIL");
        CHECK(cudaFree(temp));
        CHECK(cudaFreeHost(h_out));
        CHECK(cudaFree(d_out));
        CHECK(cudaFree(d_in));
        if (!ok) {
            std::fprintf(stderr, "native value: got %f, want %f\n", double(got), want);
            std::exit(1);
        }
    }
}

// One row of the shapes file: (m, n, lda - n, offset of A, offset of x), in elements.
struct Shape {
    size_t m, n, pad, a_off, x_off;
};

[[noreturn]] static void bad_shapes(const std::string &path, int line, const char *what) {
    std::fprintf(stderr, "native_peers: %s:%d: %s\n", path.c_str(), line, what);
    std::exit(1);
}

// The data lines (number, text) of the file at `path`, after `#` comments and blank lines and
// the line `header`, which must come first.
static std::vector<std::pair<int, std::string>> data_lines(const std::string &path, const char *header) {
    std::ifstream in(path);
    if (!in) bad_shapes(path, 0, "cannot be read");
    std::vector<std::pair<int, std::string>> lines;
    std::string line;
    bool seen = false;
    for (int number = 1; std::getline(in, line); ++number) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.empty() || line[0] == '#') continue;
        if (!seen && line != header) bad_shapes(path, number, "not the header");
        if (seen) lines.push_back({number, line});
        seen = true;
    }
    return lines;
}

// The rows of set `wanted` in the shapes file at `path` (data/sgemv_shapes.csv): after `#`
// comments and blank lines, the header "m,n,pad,a_offset,x_offset,sets", then one shape a line,
// its sets separated by spaces.
static std::vector<Shape> load_shapes(const std::string &path, const std::string &wanted) {
    std::vector<Shape> shapes;
    for (auto &[number, line] : data_lines(path, "m,n,pad,a_offset,x_offset,sets")) {
        Shape s{};
        int used = -1;
        std::sscanf(line.c_str(), "%zu,%zu,%zu,%zu,%zu,%n", &s.m, &s.n, &s.pad, &s.a_off, &s.x_off, &used);
        if (used < 0 || s.m == 0 || s.n == 0) bad_shapes(path, number, "not five sizes and the sets");
        std::istringstream sets(line.substr(size_t(used)));
        for (std::string set; sets >> set;) {
            if (set == wanted) {
                shapes.push_back(s);
                break;
            }
        }
    }
    if (shapes.empty()) bad_shapes(path, 0, "no shape in the set");
    return shapes;
}

static const int REPS = 30, WARMUP_REPS = 5, QUEUED = 20;

// Median ms of `reps` calls f(i), each between its own event pair, after WARMUP_REPS calls; the
// host does not wait between calls (as bin/bench and torch_peers.py), unless BENCH_TIMING=synced.
// BENCH_TIMING=chained puts QUEUED calls back to back between each pair (ms over QUEUED), as
// bin/bench does.
template <class F>
static double median_ms(cudaStream_t stream, int reps, F f) {
    for (int i = 0; i < WARMUP_REPS; ++i) f(i);
    CHECK(cudaStreamSynchronize(stream));
    const char *timing = std::getenv("BENCH_TIMING");
    bool synced = timing && std::string(timing) == "synced";
    int runs = timing && std::string(timing) == "chained" ? QUEUED : 1;
    std::vector<cudaEvent_t> start(reps), stop(reps);
    for (int i = 0; i < reps; ++i) {
        CHECK(cudaEventCreate(&start[i]));
        CHECK(cudaEventCreate(&stop[i]));
    }
    for (int i = 0; i < reps; ++i) {
        CHECK(cudaEventRecord(start[i], stream));
        for (int j = 0; j < runs; ++j) f(WARMUP_REPS + i * runs + j);
        CHECK(cudaEventRecord(stop[i], stream));
        if (synced) CHECK(cudaEventSynchronize(stop[i]));
    }
    CHECK(cudaStreamSynchronize(stream));
    std::vector<double> ms(reps);
    for (int i = 0; i < reps; ++i) {
        float t = 0;
        CHECK(cudaEventElapsedTime(&t, start[i], stop[i]));
        ms[i] = t / runs;
        CHECK(cudaEventDestroy(start[i]));
        CHECK(cudaEventDestroy(stop[i]));
    }
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2];
}

// Host value of an element, for the reference.
static double host_value(unsigned char v) { return v; }
static double host_value(int v) { return v; }
static double host_value(float v) { return v; }
static double host_value(__half v) { return __half2float(v); }
static double host_value(__nv_bfloat16 v) { return __bfloat162float(v); }

// First index of the largest (`max`) or smallest element of `h`.
template <class T>
static int64_t host_arg(const std::vector<T> &h, bool max) {
    int64_t best = 0;
    for (size_t i = 1; i < h.size(); ++i) {
        double a = host_value(h[i]), b = host_value(h[best]);
        if (max ? a > b : a < b) best = int64_t(i);
    }
    return best;
}

// CUB ArgMax and ArgMin over 2^28 bytes of T (element i = fill(i)), cold; checked.
template <class T, class F>
static void arg_rows(cudaStream_t stream, const cudaDeviceProp &prop, const char *name, F fill) {
    const size_t bytes = size_t(1) << 28, n = bytes / sizeof(T);
    std::vector<T> host(n);
    for (size_t i = 0; i < n; ++i) host[i] = fill(i);
    int copies = std::max(2, int((4 * size_t(prop.l2CacheSize) + bytes - 1) / bytes));
    std::vector<T *> ins(copies);
    for (auto &p : ins) {
        CHECK(cudaMalloc(&p, bytes));
        CHECK(cudaMemcpy(p, host.data(), bytes, cudaMemcpyHostToDevice));
    }
    T *d_val = nullptr;
    int64_t *d_idx = nullptr;
    CHECK(cudaMalloc(&d_val, sizeof(T)));
    CHECK(cudaMalloc(&d_idx, sizeof(int64_t)));
    for (bool max : {true, false}) {
        size_t temp_bytes = 0;
        auto run = [&](void *temp, const T *in) {
            if (max) CHECK(cub::DeviceReduce::ArgMax(temp, temp_bytes, in, d_val, d_idx, int64_t(n), stream));
            else CHECK(cub::DeviceReduce::ArgMin(temp, temp_bytes, in, d_val, d_idx, int64_t(n), stream));
        };
        run(nullptr, ins[0]);
        void *temp = nullptr;
        CHECK(cudaMalloc(&temp, temp_bytes));
        double ms = median_ms(stream, REPS, [&](int i) { run(temp, ins[i % copies]); });
        CHECK(cudaStreamSynchronize(stream));
        int64_t got = -1;
        CHECK(cudaMemcpy(&got, d_idx, sizeof(got), cudaMemcpyDeviceToHost));
        bool ok = got == host_arg(host, max);
        std::printf("| %s | %s | %.1f | %.0f | %s |\n", max ? "cub::DeviceReduce::ArgMax" : "cub::DeviceReduce::ArgMin", name,
                    ms * 1e3, bytes / ms / 1e6, ok ? "ok" : "FAIL");
        CHECK(cudaFree(temp));
        if (!ok) {
            std::fprintf(stderr, "native arg %s: index %lld, want %lld\n", name, (long long)got,
                         (long long)host_arg(host, max));
            std::exit(1);
        }
    }
    CHECK(cudaFree(d_idx));
    CHECK(cudaFree(d_val));
    for (auto p : ins) CHECK(cudaFree(p));
}

// The LLM sampling case: argmax of VOCAB bf16 logits, value and index to pinned host memory.
static void arg_latency(cudaStream_t stream) {
    const int64_t vocab = 128256, at = vocab - 1000;
    std::vector<__nv_bfloat16> host(vocab);
    for (int64_t i = 0; i < vocab; ++i)
        host[i] = __float2bfloat16(i == at ? 30.0f : float((i * 7919) % 2000) / 100.0f - 10.0f);
    __nv_bfloat16 *d_in = nullptr;
    CHECK(cudaMalloc(&d_in, vocab * sizeof(__nv_bfloat16)));
    CHECK(cudaMemcpy(d_in, host.data(), vocab * sizeof(__nv_bfloat16), cudaMemcpyHostToDevice));
    // Value at byte 0, index at byte 8 of one 16-byte result: one copy brings both.
    unsigned char *d_out = nullptr, *h_out = nullptr;
    CHECK(cudaMalloc(&d_out, 16));
    CHECK(cudaMallocHost(&h_out, 16));
    auto *d_val = reinterpret_cast<__nv_bfloat16 *>(d_out);
    auto *d_idx = reinterpret_cast<int64_t *>(d_out + 8);
    size_t temp_bytes = 0;
    CHECK(cub::DeviceReduce::ArgMax(nullptr, temp_bytes, d_in, d_val, d_idx, vocab, stream));
    void *temp = nullptr;
    CHECK(cudaMalloc(&temp, temp_bytes));
    auto call = [&] {
        CHECK(cub::DeviceReduce::ArgMax(temp, temp_bytes, d_in, d_val, d_idx, vocab, stream));
        CHECK(cudaMemcpyAsync(h_out, d_out, 16, cudaMemcpyDeviceToHost, stream));
        CHECK(cudaStreamSynchronize(stream));
    };
    Stats s = time_calls(call, VALUE_CALLS);
    int64_t got = 0;
    std::memcpy(&got, h_out + 8, sizeof(got));
    bool ok = got == at && got == host_arg(host, true);
    std::printf("\n### native: argmax of %lld bf16 logits to the host (host clock per call, median and mean of %d)\n\n",
                (long long)vocab, VALUE_CALLS);
    std::printf("| what | n | median µs | mean µs | check |\n|---|---|---|---|---|\n");
    std::printf("| cub::DeviceReduce::ArgMax + cudaMemcpyAsync (pinned) + cudaStreamSynchronize | %lld | %.2f | %.2f | %s |\n",
                (long long)vocab, s.median_us, s.mean_us, ok ? "ok" : "FAIL");
    CHECK(cudaFree(temp));
    CHECK(cudaFreeHost(h_out));
    CHECK(cudaFree(d_out));
    CHECK(cudaFree(d_in));
    if (!ok) {
        std::fprintf(stderr, "native arg latency: index %lld, want %lld\n", (long long)got, (long long)at);
        std::exit(1);
    }
}

static void arg_section(cudaStream_t stream, const cudaDeviceProp &prop) {
    std::printf("\n### native: CUB ArgMax/ArgMin, 2^28 bytes per input (cold: rotated; events, median of %d)\n\n", REPS);
    std::printf("| what | type | median µs | GB/s | check |\n|---|---|---|---|---|\n");
    arg_rows<unsigned char>(stream, prop, "u8", [](size_t i) { return (unsigned char)(i * 31 % 251); });
    arg_rows<int>(stream, prop, "i32", [](size_t i) { return int(uint32_t(i) * 2654435761u); });
    arg_rows<float>(stream, prop, "f32", [](size_t i) { return float(i % 1000) * 0.5f - 250.0f; });
    arg_rows<__half>(stream, prop, "f16", [](size_t i) { return __float2half(float(i % 1000) * 0.5f - 250.0f); });
    arg_rows<__nv_bfloat16>(stream, prop, "bf16",
                            [](size_t i) { return __float2bfloat16(float(i % 1000) * 0.5f - 250.0f); });
    arg_latency(stream);
}

static void sgemv_section(cudaStream_t stream, const cudaDeviceProp &prop, const std::vector<Shape> &shapes) {
    cublasHandle_t handle;
    CHECK_BLAS(cublasCreate(&handle));
    CHECK_BLAS(cublasSetStream(handle, stream));
    const char *csv_dir = std::getenv("BENCH_CSV_DIR");
    FILE *csv = nullptr;
    if (csv_dir) {
        std::string path = std::string(csv_dir) + "/sgemv_cublas.csv";
        csv = std::fopen(path.c_str(), "w");
        if (!csv) std::fprintf(stderr, "warning: cannot write %s\n", path.c_str());
        else std::fprintf(csv, "m,n,lda,a_off,x_off,op,cold_us,pipelined_us,hot_us,gbps\n");
    }
    std::printf("\n### native: cublasSgemv, A row-major m x n (cold: A rotated past L2; median of %d after %d)\n\n",
                REPS, WARMUP_REPS);
    std::printf("| m | n | lda | offsets | op | cold µs | cold pipelined µs | hot µs | GB/s | check |\n"
                "|---|---|---|---|---|---|---|---|---|---|\n");
    size_t l2 = size_t(prop.l2CacheSize);
    for (const Shape &s : shapes) {
        size_t lda = s.n + s.pad, a_len = s.a_off + (s.m - 1) * lda + s.n;
        size_t count = std::max<size_t>(2, (4 * l2 + 4 * a_len - 1) / (4 * a_len));
        std::vector<float> host(a_len);
        for (size_t i = 0; i < a_len; ++i) host[i] = float(int(i % 13) - 6) * 0.125f;
        std::vector<float *> as(count);
        for (auto &a : as) {
            CHECK(cudaMalloc(&a, a_len * sizeof(float)));
            CHECK(cudaMemcpy(a, host.data(), a_len * sizeof(float), cudaMemcpyHostToDevice));
        }
        for (int t = 0; t < 2; ++t) {
            bool trans = t == 1;  // our Op::T
            size_t x_len = trans ? s.m : s.n, y_len = trans ? s.n : s.m;
            std::vector<float> hx(s.x_off + x_len);
            for (size_t i = 0; i < hx.size(); ++i) hx[i] = float(i % 5) * 0.25f;
            float *x = nullptr, *y = nullptr;
            CHECK(cudaMalloc(&x, hx.size() * sizeof(float)));
            CHECK(cudaMalloc(&y, y_len * sizeof(float)));
            CHECK(cudaMemcpy(x, hx.data(), hx.size() * sizeof(float), cudaMemcpyHostToDevice));
            const float alpha = 1.0f, beta = 0.0f;
            // Column-major n x m with leading dimension lda.
            auto call = [&](int i) {
                CHECK_BLAS(cublasSgemv(handle, trans ? CUBLAS_OP_N : CUBLAS_OP_T, int(s.n), int(s.m), &alpha,
                                       as[i % count] + s.a_off, int(lda), x + s.x_off, 1, &beta, y, 1));
            };
            double cold = median_ms(stream, REPS, call);
            double piped = median_ms(stream, 5, [&](int i) {
                               for (int j = 0; j < QUEUED; ++j) call(i * QUEUED + j);
                           }) / QUEUED;
            double hot = median_ms(stream, REPS, [&](int) { call(0); });
            // Check a few outputs against a double reference.
            std::vector<float> hy(y_len);
            CHECK(cudaMemcpy(hy.data(), y, y_len * sizeof(float), cudaMemcpyDeviceToHost));
            bool ok = true;
            for (size_t o : {size_t(0), y_len / 2, y_len - 1}) {
                double want = 0, mag = 0;
                size_t len = trans ? s.m : s.n;
                for (size_t k = 0; k < len; ++k) {
                    size_t r = trans ? k : o, c = trans ? o : k;
                    double p = double(host[s.a_off + r * lda + c]) * hx[s.x_off + k];
                    want += p;
                    mag += std::fabs(p);
                }
                ok = ok && std::fabs(hy[o] - want) <= 1e-4 * mag + 1e-6;
            }
            size_t bytes = 4 * (s.m * s.n + s.m + s.n);
            double gbps = bytes / (cold * 1e-3) / 1e9;
            std::printf("| %zu | %zu | %zu | (%zu, %zu) | %s | %.1f | %.1f | %.1f | %.0f | %s |\n", s.m, s.n, lda,
                        s.a_off, s.x_off, trans ? "T" : "N", cold * 1e3, piped * 1e3, hot * 1e3, gbps,
                        ok ? "ok" : "FAIL");
            if (csv)
                std::fprintf(csv, "%zu,%zu,%zu,%zu,%zu,%s,%.2f,%.2f,%.2f,%.1f\n", s.m, s.n, lda, s.a_off, s.x_off,
                             trans ? "T" : "N", cold * 1e3, piped * 1e3, hot * 1e3, gbps);
            CHECK(cudaFree(x));
            CHECK(cudaFree(y));
            if (!ok) {
                std::fprintf(stderr, "native sgemv: wrong result for %zu x %zu\n", s.m, s.n);
                std::exit(1);
            }
        }
        for (auto a : as) CHECK(cudaFree(a));
    }
    if (csv) std::fclose(csv);
    CHECK_BLAS(cublasDestroy(handle));
}

// A 16-bit float widened to float: TransformReduce's conversion op.
struct ToFloat {
    __host__ __device__ float operator()(__half v) const { return __half2float(v); }
    __host__ __device__ float operator()(__nv_bfloat16 v) const { return __bfloat162float(v); }
};

// Sum (in f32), min and max of 2^28 bytes of T, cold; one table row each.
template <class T>
static void half_rows(cudaStream_t stream, const cudaDeviceProp &prop, const char *name) {
    const size_t bytes = size_t(1) << 28, n = bytes / sizeof(T);
    const size_t count = std::max<size_t>(2, (4 * size_t(prop.l2CacheSize) + bytes - 1) / bytes);
    std::vector<T> host(n);
    double want = 0, mag = 0;
    float lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < n; ++i) {
        host[i] = T(float(int(i * 37 % 2001) - 1000) * 0.25f);
        float v = ToFloat{}(host[i]);
        want += v, mag += std::fabs(v), lo = std::min(lo, v), hi = std::max(hi, v);
    }
    std::vector<T *> xs(count);
    for (auto &x : xs) {
        CHECK(cudaMalloc(&x, bytes));
        CHECK(cudaMemcpy(x, host.data(), bytes, cudaMemcpyHostToDevice));
    }
    float *sum = nullptr;
    T *ext = nullptr;  // min, max
    CHECK(cudaMalloc(&sum, sizeof(float)));
    CHECK(cudaMalloc(&ext, 2 * sizeof(T)));
    const int items = int(n);
    auto reduce_sum = [&](void *temp, size_t &tb, int i) {
        return cub::DeviceReduce::TransformReduce(temp, tb, xs[i % count], sum, items, cuda::std::plus<float>{},
                                                  ToFloat{}, 0.0f, stream);
    };
    auto reduce_min = [&](void *temp, size_t &tb, int i) {
        return cub::DeviceReduce::Min(temp, tb, xs[i % count], ext, items, stream);
    };
    auto reduce_max = [&](void *temp, size_t &tb, int i) {
        return cub::DeviceReduce::Max(temp, tb, xs[i % count], ext + 1, items, stream);
    };
    size_t temp_bytes = 0, tb = 0;
    CHECK(reduce_sum(nullptr, tb, 0));
    temp_bytes = std::max(temp_bytes, tb);
    CHECK(reduce_min(nullptr, tb, 0));
    temp_bytes = std::max(temp_bytes, tb);
    CHECK(reduce_max(nullptr, tb, 0));
    temp_bytes = std::max(temp_bytes, tb);
    void *temp = nullptr;
    CHECK(cudaMalloc(&temp, temp_bytes));
    auto timed = [&](auto reduce) {
        return median_ms(stream, REPS, [&](int i) {
            size_t t = temp_bytes;
            CHECK(reduce(temp, t, i));
        });
    };
    const double ms[3] = {timed(reduce_sum), timed(reduce_min), timed(reduce_max)};
    float got_sum = 0;
    T got[2];
    CHECK(cudaMemcpy(&got_sum, sum, sizeof(float), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(got, ext, 2 * sizeof(T), cudaMemcpyDeviceToHost));
    // Exact min and max; the f32 sum of 2^27 values within a tree's rounding of the f64 one.
    const bool ok[3] = {std::fabs(got_sum - want) <= 1e-5 * mag, ToFloat{}(got[0]) == lo, ToFloat{}(got[1]) == hi};
    const char *what[3] = {"cub::DeviceReduce::TransformReduce (to float, plus)", "cub::DeviceReduce::Min",
                           "cub::DeviceReduce::Max"};
    for (int k = 0; k < 3; ++k)
        std::printf("| %s | %s | %zu | %.1f | %.0f | %s |\n", what[k], name, n, ms[k] * 1e3,
                    bytes / (ms[k] * 1e-3) / 1e9, ok[k] ? "ok" : "FAIL");
    CHECK(cudaFree(temp));
    CHECK(cudaFree(ext));
    CHECK(cudaFree(sum));
    for (auto x : xs) CHECK(cudaFree(x));
    if (!(ok[0] && ok[1] && ok[2])) {
        std::fprintf(stderr, "native half %s: sum %f (want %f), min %f, max %f (want %f, %f)\n", name,
                     double(got_sum), want, double(ToFloat{}(got[0])), double(ToFloat{}(got[1])), double(lo),
                     double(hi));
        std::exit(1);
    }
}

static void half_section(cudaStream_t stream, const cudaDeviceProp &prop) {
    std::printf("\n### native: f16 and bf16 reductions, 2^28 bytes (cold: rotated past L2; median of %d after %d)\n\n",
                REPS, WARMUP_REPS);
    std::printf("| what | type | n | cold µs | GB/s | check |\n|---|---|---|---|---|---|\n");
    half_rows<__half>(stream, prop, "f16");
    half_rows<__nv_bfloat16>(stream, prop, "bf16");
}

// ---- axis: cub::DeviceSegmentedReduce over rows and ragged segments ----

// The axis shapes file's rows (kind, m, n): the row offsets i·n of a dense m × n matrix, or the
// ragged segments' offsets (segment i has (i · 2654435761 mod 2^32) mod (n + 1) elements).
static std::vector<std::pair<std::string, std::vector<int>>> load_axis_cases(const std::string &path) {
    std::vector<std::pair<std::string, std::vector<int>>> cases;
    for (auto &[number, line] : data_lines(path, "kind,m,n")) {
        char kind[16] = {};
        unsigned long long m = 0, n = 0;
        if (std::sscanf(line.c_str(), "%15[a-z],%llu,%llu", kind, &m, &n) != 3) bad_shapes(path, number, "not kind,m,n");
        bool dense = std::string(kind) == "dense";
        if (dense && m * n >= (1ull << 31)) bad_shapes(path, number, "past int offsets");
        std::vector<int> off(1, 0);
        for (unsigned long long i = 0; i < m; ++i)
            off.push_back(off.back() + int(dense ? n : (i * 2654435761ull % (1ull << 32)) % (n + 1)));
        std::string label = dense ? std::to_string(m) + "x" + std::to_string(n) + " rows"
                                  : std::to_string(m) + " segments of 0..=" + std::to_string(n);
        cases.push_back({label, off});
    }
    return cases;
}

// Element i of the axis inputs: 24 bits of a SplitMix64 hash of i over 2^24, as the bench's
// `axis_value` (src/bin/bench/harness.rs) computes it.
static float axis_value(size_t i) {
    uint64_t z = uint64_t(i) + 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return float((z ^ (z >> 31)) >> 40) / float(1u << 24);
}

template <class T>
static void axis_case(cudaStream_t stream, const cudaDeviceProp &prop, const char *type, const std::string &label,
                      const std::vector<int> &offsets) {
    int segments = int(offsets.size()) - 1;
    size_t bytes = size_t(offsets.back()) * sizeof(T);
    size_t l2 = size_t(prop.l2CacheSize);
    size_t copies = bytes > l2 ? 2 : (4 * l2 + bytes - 1) / bytes + 1;
    // The bench's axis inputs (`axis_value`): uniform in [0, 1), as torch.rand draws torch's.
    std::vector<T> host(size_t(offsets.back()));
    for (size_t i = 0; i < host.size(); ++i) host[i] = T(axis_value(i));
    std::vector<T *> ins(copies);
    for (auto &p : ins) {
        CHECK(cudaMalloc(&p, bytes + 16));
        CHECK(cudaMemcpy(p, host.data(), bytes, cudaMemcpyHostToDevice));
    }
    int *off = nullptr;
    T *sums = nullptr;
    cub::KeyValuePair<int, T> *args = nullptr;
    CHECK(cudaMalloc(&off, offsets.size() * sizeof(int)));
    CHECK(cudaMemcpy(off, offsets.data(), offsets.size() * sizeof(int), cudaMemcpyHostToDevice));
    CHECK(cudaMalloc(&sums, segments * sizeof(T)));
    CHECK(cudaMalloc(&args, segments * sizeof(*args)));
    size_t need[3] = {0, 0, 0}, temp_bytes = 0;
    CHECK(cub::DeviceSegmentedReduce::Sum(nullptr, need[0], ins[0], sums, segments, off, off + 1, stream));
    CHECK(cub::DeviceSegmentedReduce::Max(nullptr, need[1], ins[0], sums, segments, off, off + 1, stream));
    CHECK(cub::DeviceSegmentedReduce::ArgMax(nullptr, need[2], ins[0], args, segments, off, off + 1, stream));
    for (size_t b : need) temp_bytes = std::max(temp_bytes, b);
    void *temp = nullptr;
    CHECK(cudaMalloc(&temp, std::max<size_t>(temp_bytes, 1)));
    const char *names[3] = {"Sum", "Max", "ArgMax"};
    for (int op = 0; op < 3; ++op) {
        double ms = median_ms(stream, REPS, [&](int i) {
            size_t t = need[op];
            T *in = ins[size_t(i) % copies];
            if (op == 0) CHECK(cub::DeviceSegmentedReduce::Sum(temp, t, in, sums, segments, off, off + 1, stream));
            if (op == 1) CHECK(cub::DeviceSegmentedReduce::Max(temp, t, in, sums, segments, off, off + 1, stream));
            if (op == 2) CHECK(cub::DeviceSegmentedReduce::ArgMax(temp, t, in, args, segments, off, off + 1, stream));
        });
        std::printf("| cub::DeviceSegmentedReduce::%s | %s | %s | cold (%zu) | %.1f | %.1f |\n", names[op], label.c_str(),
                    type, copies, ms * 1e3, bytes / ms / 1e6);
    }
    for (auto p : ins) CHECK(cudaFree(p));
    CHECK(cudaFree(off));
    CHECK(cudaFree(sums));
    CHECK(cudaFree(args));
    CHECK(cudaFree(temp));
}

static void axis_section(cudaStream_t stream, const cudaDeviceProp &prop, const std::string &path) {
    std::printf("\n### cub::DeviceSegmentedReduce on the axis shapes (rows, ragged segments), cold\n\n");
    std::printf("| what | shape | type | mode | median µs | GB/s |\n|---|---|---|---|---|---|\n");
    for (auto &c : load_axis_cases(path)) {
        axis_case<float>(stream, prop, "float32", c.first, c.second);
        axis_case<__nv_bfloat16>(stream, prop, "bfloat16", c.first, c.second);
    }
}

// One row of the decoding shapes file: batch problems, each A m x n row-major, back to back.
struct GemvShape {
    size_t batch, m, n;
};

// The rows of set `wanted` in the decoding shapes file at `path` (data/gemv_shapes.csv).
static std::vector<GemvShape> load_gemv(const std::string &path, const std::string &wanted) {
    std::ifstream in(path);
    if (!in) bad_shapes(path, 0, "cannot be read");
    std::vector<GemvShape> rows;
    std::string line;
    int number = 0;
    bool header = true;
    while (std::getline(in, line)) {
        ++number;
        if (line.empty() || line[0] == '#') continue;
        if (header) {
            if (line != "batch,m,n,sets") bad_shapes(path, number, "not the header batch,m,n,sets");
            header = false;
            continue;
        }
        GemvShape r{};
        int used = -1;
        if (std::sscanf(line.c_str(), "%zu,%zu,%zu,%n", &r.batch, &r.m, &r.n, &used) != 3 || used < 0 || !r.batch ||
            !r.m || !r.n)
            bad_shapes(path, number, "not three sizes and the sets");
        std::istringstream sets(line.substr(size_t(used)));
        std::string set;
        while (sets >> set)
            if (set == wanted) rows.push_back(r);
    }
    if (rows.empty()) bad_shapes(path, 0, "no shape in the set");
    return rows;
}

// Device buffers of `len` elements of T, `count` of them, element i = f(i).
template <class T, class F>
static std::vector<T *> device_copies(size_t count, size_t len, F f) {
    std::vector<T> host(len);
    for (size_t i = 0; i < len; ++i) host[i] = T(f(i));
    std::vector<T *> out(count);
    for (auto &p : out) {
        CHECK(cudaMalloc(&p, len * sizeof(T)));
        CHECK(cudaMemcpy(p, host.data(), len * sizeof(T), cudaMemcpyHostToDevice));
    }
    return out;
}

static float a_of(size_t i) { return float(int(i % 13) - 6) * 0.125f; }
static float x_of(size_t i) { return float(i % 5) * 0.25f; }

// Checks outputs 0 and last of the first and last problems against a double reference from the
// element functions (A's elements as `a_at` reads them back, x's as `x_at`).
template <class Y, class AF, class XF>
static bool check_outputs(const Y *y, const GemvShape &s, bool trans, AF a_at, XF x_at, double rel) {
    size_t x_len = trans ? s.m : s.n, y_len = trans ? s.n : s.m;
    std::vector<Y> hy(s.batch * y_len);
    CHECK(cudaMemcpy(hy.data(), y, hy.size() * sizeof(Y), cudaMemcpyDeviceToHost));
    bool ok = true;
    for (size_t b : {size_t(0), s.batch - 1}) {
        for (size_t o : {size_t(0), y_len - 1}) {
            double want = 0, mag = 0;
            for (size_t k = 0; k < x_len; ++k) {
                size_t r = trans ? k : o, c = trans ? o : k;
                double p = double(a_at(b * s.m * s.n + r * s.n + c)) * double(x_at(b * x_len + k));
                want += p;
                mag += std::fabs(p);
            }
            ok = ok && std::fabs(double(float(hy[b * y_len + o])) - want) <= rel * mag + 1e-6;
        }
    }
    return ok;
}

static void batched_section(cudaStream_t stream, const cudaDeviceProp &prop, const std::vector<GemvShape> &shapes) {
    cublasHandle_t handle;
    CHECK_BLAS(cublasCreate(&handle));
    CHECK_BLAS(cublasSetStream(handle, stream));
    std::printf("\n### native: cublasSgemvStridedBatched, problems back to back, A row-major m x n (cold; median "
                "of %d after %d)\n\n",
                REPS, WARMUP_REPS);
    std::printf("| batch | m | n | op | µs | GB/s | check |\n|---|---|---|---|---|---|---|\n");
    size_t l2 = size_t(prop.l2CacheSize);
    for (const GemvShape &s : shapes) {
        size_t a_len = s.batch * s.m * s.n, count = std::max<size_t>(2, (4 * l2 + 4 * a_len - 1) / (4 * a_len));
        std::vector<float *> as = device_copies<float>(count, a_len, a_of);
        for (int t = 0; t < 2; ++t) {
            bool trans = t == 1;  // our Op::T
            size_t x_len = trans ? s.m : s.n, y_len = trans ? s.n : s.m;
            float *x = device_copies<float>(1, s.batch * x_len, x_of)[0], *y = nullptr;
            CHECK(cudaMalloc(&y, s.batch * y_len * sizeof(float)));
            const float alpha = 1.0f, beta = 0.0f;
            auto call = [&](int i) {
                CHECK_BLAS(cublasSgemvStridedBatched(handle, trans ? CUBLAS_OP_N : CUBLAS_OP_T, int(s.n), int(s.m),
                                                     &alpha, as[i % count], int(s.n), (long long)(s.m * s.n), x, 1,
                                                     (long long)x_len, &beta, y, 1, (long long)y_len, int(s.batch)));
            };
            double ms = median_ms(stream, REPS, call);
            bool ok = check_outputs(y, s, trans, a_of, x_of, 1e-4);
            size_t bytes = 4 * (a_len + s.batch * (s.m + s.n));
            std::printf("| %zu | %zu | %zu | %s | %.1f | %.0f | %s |\n", s.batch, s.m, s.n, trans ? "T" : "N", ms * 1e3,
                        bytes / (ms * 1e-3) / 1e9, ok ? "ok" : "FAIL");
            CHECK(cudaFree(x));
            CHECK(cudaFree(y));
            if (!ok) {
                std::fprintf(stderr, "native batched: wrong result for %zu x %zu x %zu\n", s.batch, s.m, s.n);
                std::exit(1);
            }
        }
        for (auto a : as) CHECK(cudaFree(a));
    }
    CHECK_BLAS(cublasDestroy(handle));
}

// What hgemv_rows needs of a half type: its name, cuBLAS data type, conversions and the
// strided-batched gemv with y of its own type (`same`: TST, HSH) and with f32 y (`wide`: TSS, HSS).
template <class H> struct HalfBlas;
template <> struct HalfBlas<__nv_bfloat16> {
    static constexpr const char *name = "bf16", *same_name = "TSTgemvStridedBatched", *wide_name = "TSSgemvStridedBatched";
    static constexpr cudaDataType_t type = CUDA_R_16BF;
    static __nv_bfloat16 of(float v) { return __float2bfloat16(v); }
    static float back(__nv_bfloat16 v) { return __bfloat162float(v); }
    template <class... Args> static cublasStatus_t same(Args... args) { return cublasTSTgemvStridedBatched(args...); }
    template <class... Args> static cublasStatus_t wide(Args... args) { return cublasTSSgemvStridedBatched(args...); }
};
template <> struct HalfBlas<__half> {
    static constexpr const char *name = "f16", *same_name = "HSHgemvStridedBatched", *wide_name = "HSSgemvStridedBatched";
    static constexpr cudaDataType_t type = CUDA_R_16F;
    static __half of(float v) { return __float2half(v); }
    static float back(__half v) { return __half2float(v); }
    template <class... Args> static cublasStatus_t same(Args... args) { return cublasHSHgemvStridedBatched(args...); }
    template <class... Args> static cublasStatus_t wide(Args... args) { return cublasHSSgemvStridedBatched(args...); }
};

// A and x of the half type H; cuBLAS's strided-batched gemv with H y (TST, HSH) and f32 y (TSS,
// HSS), and for single problems cublasGemmEx with n = 1 (H y, f32 compute).
template <class H>
static void hgemv_rows(cublasHandle_t handle, cudaStream_t stream, const cudaDeviceProp &prop,
                       const std::vector<GemvShape> &shapes) {
    using B = HalfBlas<H>;
    std::printf("\n### native: %s A and x, cuBLAS (cold; median of %d after %d)\n\n", B::name, REPS, WARMUP_REPS);
    std::printf("| call | batch | m | n | op | µs | GB/s | check |\n|---|---|---|---|---|---|---|---|\n");
    size_t l2 = size_t(prop.l2CacheSize);
    auto h_a = [](size_t i) { return B::of(a_of(i)); };
    auto h_x = [](size_t i) { return B::of(x_of(i)); };
    for (const GemvShape &s : shapes) {
        size_t a_len = s.batch * s.m * s.n, count = std::max<size_t>(2, (4 * l2 + 2 * a_len - 1) / (2 * a_len));
        std::vector<H *> as = device_copies<H>(count, a_len, h_a);
        for (int t = 0; t < 2; ++t) {
            bool trans = t == 1;  // our Op::T
            size_t x_len = trans ? s.m : s.n, y_len = trans ? s.n : s.m;
            H *x = device_copies<H>(1, s.batch * x_len, h_x)[0], *y16 = nullptr;
            float *y32 = nullptr;
            CHECK(cudaMalloc(&y16, s.batch * y_len * sizeof(H)));
            CHECK(cudaMalloc(&y32, s.batch * y_len * sizeof(float)));
            const float alpha = 1.0f, beta = 0.0f;
            cublasOperation_t op = trans ? CUBLAS_OP_N : CUBLAS_OP_T;
            int rows = int(s.n), cols = int(s.m);  // column-major n x m
            long long sa = (long long)(s.m * s.n), sx = (long long)x_len, sy = (long long)y_len;
            auto row = [&](const char *what, double ms, size_t y_bytes, bool ok) {
                size_t bytes = 2 * (a_len + s.batch * x_len) + y_bytes * s.batch * y_len;
                std::printf("| %s | %zu | %zu | %zu | %s | %.1f | %.0f | %s |\n", what, s.batch, s.m, s.n,
                            trans ? "T" : "N", ms * 1e3, bytes / (ms * 1e-3) / 1e9, ok ? "ok" : "FAIL");
                if (!ok) {
                    std::fprintf(stderr, "native half: wrong result for %s %zu x %zu x %zu\n", what, s.batch, s.m, s.n);
                    std::exit(1);
                }
            };
            auto a_back = [](size_t i) { return B::back(B::of(a_of(i))); };
            auto x_back = [](size_t i) { return B::back(B::of(x_of(i))); };
            double same = median_ms(stream, REPS, [&](int i) {
                CHECK_BLAS(B::same(handle, op, rows, cols, &alpha, (const H *)as[i % count], rows, sa, (const H *)x, 1,
                                   sx, &beta, y16, 1, sy, int(s.batch)));
            });
            row(B::same_name, same, 2, check_outputs(y16, s, trans, a_back, x_back, 1e-2));
            double wide = median_ms(stream, REPS, [&](int i) {
                CHECK_BLAS(B::wide(handle, op, rows, cols, &alpha, (const H *)as[i % count], rows, sa, (const H *)x, 1,
                                   sx, &beta, y32, 1, sy, int(s.batch)));
            });
            row(B::wide_name, wide, 4, check_outputs(y32, s, trans, a_back, x_back, 1e-4));
            if (s.batch == 1) {
                // C (y_len x 1) = op(A_cm) (y_len x x_len) x (x_len x 1), column-major.
                double gemm = median_ms(stream, REPS, [&](int i) {
                    CHECK_BLAS(cublasGemmEx(handle, op, CUBLAS_OP_N, int(y_len), 1, int(x_len), &alpha, as[i % count],
                                            B::type, rows, x, B::type, int(x_len), &beta, y16, B::type, int(y_len),
                                            CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
                });
                row("GemmEx (n = 1)", gemm, 2, check_outputs(y16, s, trans, a_back, x_back, 1e-2));
            }
            CHECK(cudaFree(x));
            CHECK(cudaFree(y16));
            CHECK(cudaFree(y32));
        }
        for (auto a : as) CHECK(cudaFree(a));
    }
}

// bf16 then f16 A and x (hgemv_rows), on one handle.
static void hgemv_section(cudaStream_t stream, const cudaDeviceProp &prop, const std::vector<GemvShape> &shapes) {
    cublasHandle_t handle;
    CHECK_BLAS(cublasCreate(&handle));
    CHECK_BLAS(cublasSetStream(handle, stream));
    hgemv_rows<__nv_bfloat16>(handle, stream, prop, shapes);
    hgemv_rows<__half>(handle, stream, prop, shapes);
    CHECK_BLAS(cublasDestroy(handle));
}

int main(int argc, char **argv) {
    std::string shapes_path = "data/sgemv_shapes.csv", axis_path = "data/axis_shapes.csv";
    std::string gemv_path = "data/gemv_shapes.csv";
    std::vector<std::string> sections;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--shapes") == 0 && i + 1 < argc) {
            shapes_path = argv[++i];
        } else if (std::strcmp(argv[i], "--axis-shapes") == 0 && i + 1 < argc) {
            axis_path = argv[++i];
        } else if (std::strcmp(argv[i], "--gemv") == 0 && i + 1 < argc) {
            gemv_path = argv[++i];
        } else if (std::strcmp(argv[i], "value") == 0 || std::strcmp(argv[i], "arg") == 0 ||
                   std::strcmp(argv[i], "sgemv") == 0 || std::strcmp(argv[i], "half") == 0 ||
                   std::strcmp(argv[i], "axis") == 0 || std::strcmp(argv[i], "batched") == 0 ||
                   std::strcmp(argv[i], "hgemv") == 0) {
            sections.push_back(argv[i]);
        } else {
            std::fprintf(stderr, "unknown argument %s; usage: native_peers [--shapes PATH] [--axis-shapes PATH] "
                         "[--gemv PATH] [value|arg|sgemv|half|axis|batched|hgemv]...\n", argv[i]);
            return 2;
        }
    }
    auto wanted = [&](const char *name) {
        return sections.empty() || std::find(sections.begin(), sections.end(), name) != sections.end();
    };
    // Read before any timing, so that a missing file fails at once.
    std::vector<Shape> shapes;
    if (wanted("sgemv")) shapes = load_shapes(shapes_path, "bench");
    std::vector<GemvShape> attention, decoding;
    if (wanted("batched") || wanted("hgemv")) attention = load_gemv(gemv_path, "attention");
    if (wanted("hgemv")) {
        decoding = load_gemv(gemv_path, "llama");
        decoding.insert(decoding.end(), attention.begin(), attention.end());
    }
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    int runtime = 0;
    CHECK(cudaRuntimeGetVersion(&runtime));
    std::printf("## Native peers on %s (CUDA runtime %d)\n", prop.name, runtime);
    cudaStream_t stream;
    CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    if (wanted("value")) value_section(stream);
    if (wanted("arg")) arg_section(stream, prop);
    if (wanted("sgemv")) sgemv_section(stream, prop, shapes);
    if (wanted("half")) half_section(stream, prop);
    if (wanted("axis")) axis_section(stream, prop, axis_path);
    if (wanted("batched")) batched_section(stream, prop, attention);
    if (wanted("hgemv")) hgemv_section(stream, prop, decoding);
    CHECK(cudaStreamDestroy(stream));
    return 0;
}
