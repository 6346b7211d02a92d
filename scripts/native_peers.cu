// Native C++ peers for the cudakernels benchmarks, compiled on the GPU machine by the runner:
//   /usr/local/cuda/bin/nvcc -O3 -std=c++17 -arch=sm_XX -o native_peers native_peers.cu
//   (sgemv needs -lcublas)
// Usage: ./native_peers [--shapes PATH] [--gemv PATH] [value|sgemv|batched|half]...   (sections;
// all by default). Prints markdown tables; with BENCH_CSV_DIR set, sgemv also writes
// sgemv_cublas.csv there. --shapes is the sgemv shapes file (default data/sgemv_shapes.csv, from
// the working directory), --gemv the decoding shapes (default data/gemv_shapes.csv).
//   value  a value to the host: cub::DeviceReduce::Sum into a device word, cudaMemcpyAsync into
//          pinned memory on the same stream, cudaStreamSynchronize; host clock per call, median
//          and mean of VALUE_CALLS calls (the bench's "value to the host" section times the same).
//   sgemv  cublasSgemv on the bench's shapes (set "bench" of the shapes file), both ops, A row-major
//          m x n = column-major n x m: Op::N is CUBLAS_OP_T on it, Op::T is CUBLAS_OP_N. CUDA
//          events per call, median of REPS after WARMUP_REPS, cold (A rotated through buffers
//          totalling >= 4x L2), pipelined (QUEUED calls between one event pair), hot.
//   batched  cublasSgemvStridedBatched on the attention decode shapes (set "attention" of --gemv),
//          both ops, cold (A rotated past L2), as bin/bench's batched section.
//   half   bf16 A, as bin/bench's half section: cublasGemmEx (n = 1, bf16 x and y, f32 compute)
//          on the Llama projections (set "llama"), cublasTSTgemvStridedBatched (bf16 y) and
//          cublasTSSgemvStridedBatched (f32 y) on every shape; both ops, cold.
// Every CUDA and cuBLAS call is checked.
#include <cub/cub.cuh>
#include <cuda_bf16.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
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

// The rows of set `wanted` in the shapes file at `path` (data/sgemv_shapes.csv): after `#`
// comments and blank lines, the header "m,n,pad,a_offset,x_offset,sets", then one shape a line,
// its sets separated by spaces.
static std::vector<Shape> load_shapes(const std::string &path, const std::string &wanted) {
    std::ifstream in(path);
    if (!in) bad_shapes(path, 0, "cannot be read");
    std::vector<Shape> shapes;
    std::string line;
    bool header = false;
    for (int number = 1; std::getline(in, line); ++number) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.empty() || line[0] == '#') continue;
        if (!header) {
            if (line != "m,n,pad,a_offset,x_offset,sets") bad_shapes(path, number, "not the header");
            header = true;
            continue;
        }
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

// Median ms of `reps` calls f(i), each between its own event pair, after WARMUP_REPS calls.
template <class F>
static double median_ms(cudaStream_t stream, int reps, F f) {
    for (int i = 0; i < WARMUP_REPS; ++i) f(i);
    CHECK(cudaStreamSynchronize(stream));
    cudaEvent_t start, stop;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));
    std::vector<double> ms(reps);
    for (int i = 0; i < reps; ++i) {
        CHECK(cudaEventRecord(start, stream));
        f(WARMUP_REPS + i);
        CHECK(cudaEventRecord(stop, stream));
        CHECK(cudaEventSynchronize(stop));
        float t = 0;
        CHECK(cudaEventElapsedTime(&t, start, stop));
        ms[i] = t;
    }
    CHECK(cudaEventDestroy(start));
    CHECK(cudaEventDestroy(stop));
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2];
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

// bf16 A and x; cuBLAS's TST (bf16 y) and TSS (f32 y) strided-batched gemv, and for single
// problems cublasGemmEx with n = 1 (bf16 y, f32 compute).
static void half_section(cudaStream_t stream, const cudaDeviceProp &prop, const std::vector<GemvShape> &shapes) {
    cublasHandle_t handle;
    CHECK_BLAS(cublasCreate(&handle));
    CHECK_BLAS(cublasSetStream(handle, stream));
    std::printf("\n### native: bf16 A and x, cuBLAS (cold; median of %d after %d)\n\n", REPS, WARMUP_REPS);
    std::printf("| call | batch | m | n | op | µs | GB/s | check |\n|---|---|---|---|---|---|---|---|\n");
    size_t l2 = size_t(prop.l2CacheSize);
    auto bf_a = [](size_t i) { return __float2bfloat16(a_of(i)); };
    auto bf_x = [](size_t i) { return __float2bfloat16(x_of(i)); };
    for (const GemvShape &s : shapes) {
        size_t a_len = s.batch * s.m * s.n, count = std::max<size_t>(2, (4 * l2 + 2 * a_len - 1) / (2 * a_len));
        std::vector<__nv_bfloat16 *> as = device_copies<__nv_bfloat16>(count, a_len, bf_a);
        for (int t = 0; t < 2; ++t) {
            bool trans = t == 1;  // our Op::T
            size_t x_len = trans ? s.m : s.n, y_len = trans ? s.n : s.m;
            __nv_bfloat16 *x = device_copies<__nv_bfloat16>(1, s.batch * x_len, bf_x)[0], *y16 = nullptr;
            float *y32 = nullptr;
            CHECK(cudaMalloc(&y16, s.batch * y_len * sizeof(__nv_bfloat16)));
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
            auto a_back = [](size_t i) { return __bfloat162float(__float2bfloat16(a_of(i))); };
            auto x_back = [](size_t i) { return __bfloat162float(__float2bfloat16(x_of(i))); };
            double tst = median_ms(stream, REPS, [&](int i) {
                CHECK_BLAS(cublasTSTgemvStridedBatched(handle, op, rows, cols, &alpha, as[i % count], rows, sa, x, 1, sx,
                                                       &beta, y16, 1, sy, int(s.batch)));
            });
            row("TSTgemvStridedBatched", tst, 2, check_outputs(y16, s, trans, a_back, x_back, 1e-2));
            double tss = median_ms(stream, REPS, [&](int i) {
                CHECK_BLAS(cublasTSSgemvStridedBatched(handle, op, rows, cols, &alpha, as[i % count], rows, sa, x, 1, sx,
                                                       &beta, y32, 1, sy, int(s.batch)));
            });
            row("TSSgemvStridedBatched", tss, 4, check_outputs(y32, s, trans, a_back, x_back, 1e-4));
            if (s.batch == 1) {
                // C (y_len x 1) = op(A_cm) (y_len x x_len) x (x_len x 1), column-major.
                double gemm = median_ms(stream, REPS, [&](int i) {
                    CHECK_BLAS(cublasGemmEx(handle, op, CUBLAS_OP_N, int(y_len), 1, int(x_len), &alpha, as[i % count],
                                            CUDA_R_16BF, rows, x, CUDA_R_16BF, int(x_len), &beta, y16, CUDA_R_16BF,
                                            int(y_len), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
                });
                row("GemmEx (n = 1)", gemm, 2, check_outputs(y16, s, trans, a_back, x_back, 1e-2));
            }
            CHECK(cudaFree(x));
            CHECK(cudaFree(y16));
            CHECK(cudaFree(y32));
        }
        for (auto a : as) CHECK(cudaFree(a));
    }
    CHECK_BLAS(cublasDestroy(handle));
}

int main(int argc, char **argv) {
    std::string shapes_path = "data/sgemv_shapes.csv", gemv_path = "data/gemv_shapes.csv";
    std::vector<std::string> sections;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--shapes") == 0 && i + 1 < argc) {
            shapes_path = argv[++i];
        } else if (std::strcmp(argv[i], "--gemv") == 0 && i + 1 < argc) {
            gemv_path = argv[++i];
        } else if (std::strcmp(argv[i], "value") == 0 || std::strcmp(argv[i], "sgemv") == 0 ||
                   std::strcmp(argv[i], "batched") == 0 || std::strcmp(argv[i], "half") == 0) {
            sections.push_back(argv[i]);
        } else {
            std::fprintf(stderr, "unknown argument %s; usage: native_peers [--shapes PATH] [--gemv PATH] [value|sgemv|batched|half]...\n", argv[i]);
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
    if (wanted("batched") || wanted("half")) attention = load_gemv(gemv_path, "attention");
    if (wanted("half")) {
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
    if (wanted("sgemv")) sgemv_section(stream, prop, shapes);
    if (wanted("batched")) batched_section(stream, prop, attention);
    if (wanted("half")) half_section(stream, prop, decoding);
    CHECK(cudaStreamDestroy(stream));
    return 0;
}
