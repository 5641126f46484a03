// launch_cubin: runs the kernels that `python studies/execute_vs_gpu.py prepare DIR` wrote into DIR
// on the first CUDA device and writes their outputs beside their inputs.
//
//     launch_cubin DIR [--only NAME]... [--timeout SECONDS]
//
// DIR/manifest.txt lists the kernels (one block each, paths relative to DIR):
//
//     rfmodel-gpu-check 1
//     arch sm_90
//     kernel NAME
//     cubin NAME/NAME.cubin
//     symbol NAME
//     grid X Y Z
//     block X Y Z
//     shared DYNAMIC_BYTES
//     array ARRAY BYTES FILE            (a global-memory array, uploaded from FILE)
//     const SYMBOL BYTES FILE           (a __constant__ variable, set from FILE)
//     param NAME SIZE HEX               (a scalar: its SIZE bytes, little-endian, in hex)
//     param NAME ptr ARRAY              (the device address of ARRAY)
//     output ARRAY FILE                 (downloaded after the launch)
//     end
//
// Each kernel runs in a child process of its own, so that a fault, a crash or a hang (killed after
// --timeout seconds, default 60) of one kernel does not stop the others. Per kernel the launcher
// prints one line and writes DIR/NAME/status.txt ("ok MILLISECONDS" or "error MESSAGE").
// Exit status: 0 when every kernel ran, 1 when some failed, 2 for a bad command line or manifest,
// 3 when there is no usable CUDA device.
//
// Built with the static CUDA runtime and its library API (cudaLibraryLoadFromFile,
// cudaLibraryGetKernel, cudaLibraryGetGlobal, cudaLaunchKernel); it needs the NVIDIA driver at run
// time, nothing else.

#include <cuda_runtime.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <dlfcn.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

namespace {

const char* kMagic = "rfmodel-gpu-check";

struct Array {
    std::string name;
    size_t bytes = 0;
    std::string file;
};

struct Const {
    std::string symbol;
    size_t bytes = 0;
    std::string file;
};

struct ParamSpec {
    std::string name;
    bool is_ptr = false;
    std::string array;                // is_ptr
    std::vector<unsigned char> bytes;  // scalar
};

struct Output {
    std::string array;
    std::string file;
};

struct Entry {
    std::string name;
    std::string cubin;
    std::string symbol;
    unsigned grid[3] = {0, 0, 0};
    unsigned block[3] = {0, 0, 0};
    size_t shared = 0;
    std::vector<Array> arrays;
    std::vector<Const> consts;
    std::vector<ParamSpec> params;
    std::vector<Output> outputs;
    int line = 0;
};

struct Manifest {
    std::string arch;
    std::vector<Entry> entries;
};

[[noreturn]] void bad_manifest(const std::string& path, int line, const std::string& what) {
    std::fprintf(stderr, "launch_cubin: %s:%d: %s\n", path.c_str(), line, what.c_str());
    std::exit(2);
}

unsigned long long parse_number(const std::string& s, const std::string& path, int line, const char* what) {
    if (s.empty() || s[0] == '-') bad_manifest(path, line, std::string("expected a non-negative ") + what + ", got '" + s + "'");
    errno = 0;
    char* end = nullptr;
    unsigned long long v = std::strtoull(s.c_str(), &end, 10);
    if (errno != 0 || end == s.c_str() || *end != '\0')
        bad_manifest(path, line, std::string("expected a non-negative ") + what + ", got '" + s + "'");
    return v;
}

int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

Manifest read_manifest(const std::string& path) {
    std::ifstream in(path);
    if (!in) {
        std::fprintf(stderr, "launch_cubin: cannot open %s: %s (run `execute_vs_gpu.py prepare DIR` first)\n",
                     path.c_str(), std::strerror(errno));
        std::exit(2);
    }
    Manifest m;
    Entry* cur = nullptr;
    std::string raw;
    int line = 0;
    bool header = false;
    while (std::getline(in, raw)) {
        ++line;
        std::istringstream ss(raw);
        std::vector<std::string> t;
        for (std::string w; ss >> w;) t.push_back(w);
        if (t.empty() || t[0][0] == '#') continue;
        const std::string& key = t[0];
        auto need = [&](size_t n) {
            if (t.size() != n)
                bad_manifest(path, line, "'" + key + "' takes " + std::to_string(n - 1) + " fields, got " +
                                             std::to_string(t.size() - 1));
        };
        if (!header) {
            if (key != kMagic || t.size() != 2 || t[1] != "1")
                bad_manifest(path, line, std::string("not a manifest of version 1 (expected '") + kMagic + " 1')");
            header = true;
            continue;
        }
        if (key == "arch") {
            need(2);
            m.arch = t[1];
        } else if (key == "kernel") {
            need(2);
            if (cur) bad_manifest(path, line, "'kernel' inside the block of kernel '" + cur->name + "' (missing 'end')");
            m.entries.emplace_back();
            cur = &m.entries.back();
            cur->name = t[1];
            cur->line = line;
        } else if (!cur) {
            bad_manifest(path, line, "'" + key + "' outside a kernel block");
        } else if (key == "end") {
            need(1);
            if (cur->cubin.empty() || cur->symbol.empty() || cur->grid[0] == 0 || cur->block[0] == 0)
                bad_manifest(path, line, "kernel '" + cur->name + "' lacks its cubin, symbol, grid or block");
            cur = nullptr;
        } else if (key == "cubin") {
            need(2);
            cur->cubin = t[1];
        } else if (key == "symbol") {
            need(2);
            cur->symbol = t[1];
        } else if (key == "grid" || key == "block") {
            need(4);
            unsigned* d = key == "grid" ? cur->grid : cur->block;
            for (int j = 0; j < 3; ++j) {
                unsigned long long v = parse_number(t[1 + j], path, line, "size");
                if (v == 0 || v > 0x7fffffffULL) bad_manifest(path, line, key + " sizes must be positive");
                d[j] = static_cast<unsigned>(v);
            }
        } else if (key == "shared") {
            need(2);
            cur->shared = parse_number(t[1], path, line, "byte count");
        } else if (key == "array") {
            need(4);
            cur->arrays.push_back({t[1], static_cast<size_t>(parse_number(t[2], path, line, "byte count")), t[3]});
        } else if (key == "const") {
            need(4);
            cur->consts.push_back({t[1], static_cast<size_t>(parse_number(t[2], path, line, "byte count")), t[3]});
        } else if (key == "param") {
            need(4);
            ParamSpec p;
            p.name = t[1];
            if (t[2] == "ptr") {
                p.is_ptr = true;
                p.array = t[3];
                bool found = false;
                for (const Array& a : cur->arrays) found = found || a.name == p.array;
                if (!found) bad_manifest(path, line, "parameter '" + p.name + "' points to unknown array '" + p.array + "'");
            } else {
                unsigned long long size = parse_number(t[2], path, line, "parameter size");
                const std::string& hex = t[3];
                if (size == 0 || size > 16 || hex.size() != 2 * size)
                    bad_manifest(path, line, "parameter '" + p.name + "': size " + t[2] + " does not match '" + hex + "'");
                for (size_t j = 0; j < size; ++j) {
                    int hi = hex_digit(hex[2 * j]), lo = hex_digit(hex[2 * j + 1]);
                    if (hi < 0 || lo < 0) bad_manifest(path, line, "parameter '" + p.name + "': bad hex '" + hex + "'");
                    p.bytes.push_back(static_cast<unsigned char>(hi * 16 + lo));
                }
            }
            cur->params.push_back(p);
        } else if (key == "output") {
            need(3);
            bool found = false;
            for (const Array& a : cur->arrays) found = found || a.name == t[1];
            if (!found) bad_manifest(path, line, "output '" + t[1] + "' is not one of the kernel's arrays");
            cur->outputs.push_back({t[1], t[2]});
        } else {
            bad_manifest(path, line, "unknown key '" + key + "'");
        }
    }
    if (!header) bad_manifest(path, line, "empty manifest");
    if (cur) bad_manifest(path, line, "kernel '" + cur->name + "' has no 'end'");
    return m;
}

// ---- one kernel, in a child process -------------------------------------------------------------

struct CudaError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

void check(cudaError_t err, const std::string& step) {
    if (err != cudaSuccess)
        throw CudaError(step + ": " + cudaGetErrorName(err) + " (" + cudaGetErrorString(err) + ")");
}

std::vector<unsigned char> read_file(const std::string& path, size_t expect) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("cannot open " + path + ": " + std::strerror(errno));
    std::vector<unsigned char> buf((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (buf.size() != expect)
        throw std::runtime_error(path + " holds " + std::to_string(buf.size()) + " bytes, the manifest says " +
                                 std::to_string(expect));
    return buf;
}

void write_file(const std::string& path, const void* data, size_t n) {
    std::string tmp = path + ".tmp";
    FILE* f = std::fopen(tmp.c_str(), "wb");
    if (!f) throw std::runtime_error("cannot write " + tmp + ": " + std::strerror(errno));
    size_t done = n ? std::fwrite(data, 1, n, f) : 0;
    if (std::fclose(f) != 0 || done != n) throw std::runtime_error("cannot write " + tmp + ": " + std::strerror(errno));
    if (std::rename(tmp.c_str(), path.c_str()) != 0)
        throw std::runtime_error("cannot rename " + tmp + ": " + std::strerror(errno));
}

void write_status(const std::string& dir, const Entry& e, const std::string& text) {
    try {
        write_file(dir + "/" + e.name + "/status.txt", text.data(), text.size());
    } catch (const std::exception& ex) {
        std::printf("kernel %s: cannot write its status: %s\n", e.name.c_str(), ex.what());
    }
}

// Runs one kernel; returns the milliseconds of the launch. Throws on every error.
double run_entry(const std::string& dir, const Entry& e) {
    std::vector<void*> device(e.arrays.size(), nullptr);
    cudaLibrary_t lib = nullptr;
    auto cleanup = [&]() {
        for (void* p : device)
            if (p) cudaFree(p);
        if (lib) cudaLibraryUnload(lib);
    };
    try {
        check(cudaSetDevice(0), "select device 0");
        const std::string cubin = dir + "/" + e.cubin;
        check(cudaLibraryLoadFromFile(&lib, cubin.c_str(), nullptr, nullptr, 0, nullptr, nullptr, 0),
              "load " + cubin);
        cudaKernel_t kern = nullptr;
        check(cudaLibraryGetKernel(&kern, lib, e.symbol.c_str()), "find kernel '" + e.symbol + "' in " + e.cubin);

        for (const Const& c : e.consts) {
            void* dptr = nullptr;
            size_t bytes = 0;
            check(cudaLibraryGetGlobal(&dptr, &bytes, lib, c.symbol.c_str()),
                  "find __constant__ '" + c.symbol + "' in " + e.cubin);
            if (bytes != c.bytes)
                throw std::runtime_error("__constant__ '" + c.symbol + "' has " + std::to_string(bytes) +
                                         " bytes in the cubin, the manifest gives " + std::to_string(c.bytes));
            std::vector<unsigned char> data = read_file(dir + "/" + c.file, c.bytes);
            check(cudaMemcpy(dptr, data.data(), bytes, cudaMemcpyHostToDevice), "set __constant__ '" + c.symbol + "'");
        }

        for (size_t j = 0; j < e.arrays.size(); ++j) {
            const Array& a = e.arrays[j];
            std::vector<unsigned char> data = read_file(dir + "/" + a.file, a.bytes);
            check(cudaMalloc(&device[j], a.bytes ? a.bytes : 4), "allocate array '" + a.name + "'");
            if (a.bytes)
                check(cudaMemcpy(device[j], data.data(), a.bytes, cudaMemcpyHostToDevice), "upload array '" + a.name + "'");
        }

        struct alignas(16) Slot {
            unsigned char bytes[16];
        };
        std::vector<Slot> slots(e.params.size());
        std::vector<void*> args(e.params.size());
        for (size_t j = 0; j < e.params.size(); ++j) {
            const ParamSpec& p = e.params[j];
            std::memset(slots[j].bytes, 0, sizeof(Slot));
            if (p.is_ptr) {
                for (size_t k = 0; k < e.arrays.size(); ++k)
                    if (e.arrays[k].name == p.array) std::memcpy(slots[j].bytes, &device[k], sizeof(void*));
            } else {
                std::memcpy(slots[j].bytes, p.bytes.data(), p.bytes.size());
            }
            args[j] = slots[j].bytes;
        }

        const void* func = reinterpret_cast<const void*>(kern);
        if (e.shared > 48 * 1024)
            check(cudaFuncSetAttribute(func, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(e.shared)),
                  "allow " + std::to_string(e.shared) + " bytes of dynamic shared memory");
        cudaEvent_t t0, t1;
        check(cudaEventCreate(&t0), "create event");
        check(cudaEventCreate(&t1), "create event");
        check(cudaEventRecord(t0, 0), "record event");
        dim3 grid(e.grid[0], e.grid[1], e.grid[2]), block(e.block[0], e.block[1], e.block[2]);
        check(cudaLaunchKernel(func, grid, block, args.empty() ? nullptr : args.data(), e.shared, 0), "launch");
        check(cudaGetLastError(), "launch");
        check(cudaEventRecord(t1, 0), "record event");
        check(cudaDeviceSynchronize(), "run (synchronize after the launch)");
        float ms = 0.0f;
        check(cudaEventElapsedTime(&ms, t0, t1), "read the launch time");
        cudaEventDestroy(t0);
        cudaEventDestroy(t1);

        for (const Output& o : e.outputs) {
            size_t k = 0;
            while (e.arrays[k].name != o.array) ++k;
            std::vector<unsigned char> host(e.arrays[k].bytes);
            if (!host.empty())
                check(cudaMemcpy(host.data(), device[k], host.size(), cudaMemcpyDeviceToHost), "download output '" + o.array + "'");
            write_file(dir + "/" + o.file, host.data(), host.size());
        }
        cleanup();
        return ms;
    } catch (...) {
        cleanup();
        throw;
    }
}

int child_run(const std::string& dir, const Entry& e) {
    try {
        double ms = run_entry(dir, e);
        char buf[64];
        std::snprintf(buf, sizeof buf, "%.4f", ms);
        write_status(dir, e, std::string("ok ") + buf + "\n");
        std::string outs;
        for (const Output& o : e.outputs) outs += (outs.empty() ? "" : ", ") + o.array;
        std::printf("kernel %s: ok, %s ms, grid %u x %u x %u, block %u x %u x %u, outputs %s\n", e.name.c_str(), buf,
                    e.grid[0], e.grid[1], e.grid[2], e.block[0], e.block[1], e.block[2], outs.c_str());
        std::fflush(stdout);
        return 0;
    } catch (const std::exception& ex) {
        write_status(dir, e, std::string("error ") + ex.what() + "\n");
        std::printf("kernel %s: FAILED: %s\n", e.name.c_str(), ex.what());
        std::fflush(stdout);
        return 1;
    }
}

// Device query, in a child process as well (the parent never touches CUDA, so that it can fork).
int child_probe(const std::string& arch) {
    // the static runtime loads the driver library itself; without it every call reports an
    // "insufficient driver", which hides the actual cause
    if (!dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL)) {
        std::printf("no CUDA device: the NVIDIA driver library libcuda.so.1 cannot be loaded (%s)\n", dlerror());
        std::fflush(stdout);
        return 3;
    }
    int count = 0, driver = 0, runtime = 0;
    cudaError_t err = cudaGetDeviceCount(&count);
    cudaDriverGetVersion(&driver);
    cudaRuntimeGetVersion(&runtime);
    if (err != cudaSuccess || count == 0) {
        std::string why = err != cudaSuccess ? std::string(cudaGetErrorName(err)) + " (" + cudaGetErrorString(err) + ")"
                                             : std::string("the driver reports 0 devices");
        std::printf("no CUDA device: %s; driver supports CUDA %d.%d, the launcher was built with CUDA %d.%d\n",
                    why.c_str(), driver / 1000, (driver % 1000) / 10, runtime / 1000, (runtime % 1000) / 10);
        std::fflush(stdout);
        return 3;
    }
    cudaDeviceProp prop;
    err = cudaGetDeviceProperties(&prop, 0);
    if (err != cudaSuccess) {
        std::printf("no CUDA device: cannot read the properties of device 0: %s\n", cudaGetErrorString(err));
        std::fflush(stdout);
        return 3;
    }
    std::string sm = "sm_" + std::to_string(prop.major) + std::to_string(prop.minor);
    std::printf("device: %s, %s, %d SMs, driver CUDA %d.%d, runtime CUDA %d.%d\n", prop.name, sm.c_str(),
                prop.multiProcessorCount, driver / 1000, (driver % 1000) / 10, runtime / 1000, (runtime % 1000) / 10);
    if (!arch.empty() && arch != sm)
        std::printf("warning: the cubins are for %s, the device is %s: loading them may fail\n", arch.c_str(), sm.c_str());
    std::fflush(stdout);
    return 0;
}

// Runs fn() in a child; returns its exit status, or a description of how it ended in `how`.
template <class Fn>
int in_child(Fn fn, double timeout_s, std::string& how) {
    std::fflush(stdout);
    std::fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        how = std::string("cannot fork: ") + std::strerror(errno);
        return -1;
    }
    if (pid == 0) {
        int rc = fn();
        std::fflush(stdout);
        _exit(rc);
    }
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    int status = 0;
    for (;;) {
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid) break;
        if (r < 0 && errno != EINTR) {
            how = std::string("waitpid: ") + std::strerror(errno);
            return -1;
        }
        clock_gettime(CLOCK_MONOTONIC, &now);
        double elapsed = (now.tv_sec - start.tv_sec) + 1e-9 * (now.tv_nsec - start.tv_nsec);
        if (elapsed > timeout_s) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            how = "timed out after " + std::to_string(static_cast<int>(timeout_s)) + " s (killed)";
            return -1;
        }
        struct timespec nap = {0, 5 * 1000 * 1000};
        nanosleep(&nap, nullptr);
    }
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) {
        how = std::string("crashed with signal ") + std::to_string(WTERMSIG(status)) + " (" + strsignal(WTERMSIG(status)) + ")";
        return -1;
    }
    how = "ended abnormally";
    return -1;
}

void usage() {
    std::fprintf(stderr,
                 "usage: launch_cubin DIR [--only NAME]... [--timeout SECONDS]\n"
                 "  runs the kernels of DIR/manifest.txt (written by `python studies/execute_vs_gpu.py prepare DIR`)\n"
                 "  on CUDA device 0 and writes their outputs into DIR/<kernel>/\n");
}

}  // namespace

int main(int argc, char** argv) {
    std::string dir;
    std::vector<std::string> only;
    double timeout_s = 60.0;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "-h" || a == "--help") {
            usage();
            return 0;
        } else if (a == "--only" && i + 1 < argc) {
            only.push_back(argv[++i]);
        } else if (a == "--timeout" && i + 1 < argc) {
            char* end = nullptr;
            timeout_s = std::strtod(argv[++i], &end);
            if (*end != '\0' || !(timeout_s > 0)) {
                std::fprintf(stderr, "launch_cubin: --timeout takes a positive number of seconds, got '%s'\n", argv[i]);
                return 2;
            }
        } else if (!a.empty() && a[0] == '-') {
            std::fprintf(stderr, "launch_cubin: unknown option '%s'\n", a.c_str());
            usage();
            return 2;
        } else if (dir.empty()) {
            dir = a;
        } else {
            std::fprintf(stderr, "launch_cubin: more than one directory given ('%s', '%s')\n", dir.c_str(), a.c_str());
            return 2;
        }
    }
    if (dir.empty()) {
        usage();
        return 2;
    }
    while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
    Manifest m = read_manifest(dir + "/manifest.txt");
    for (const std::string& n : only) {
        bool found = false;
        for (const Entry& e : m.entries) found = found || e.name == n;
        if (!found) {
            std::fprintf(stderr, "launch_cubin: --only %s: no such kernel in %s/manifest.txt\n", n.c_str(), dir.c_str());
            return 2;
        }
    }
    std::printf("manifest: %zu kernels for %s\n", m.entries.size(), m.arch.empty() ? "?" : m.arch.c_str());

    std::string how;
    int rc = in_child([&]() { return child_probe(m.arch); }, 60.0, how);
    if (rc != 0) {
        if (rc < 0) std::printf("no CUDA device: the device query %s\n", how.c_str());
        std::printf("launch_cubin: no usable CUDA device; no kernel was run\n");
        std::fflush(stdout);
        return 3;
    }

    int ok = 0, failed = 0;
    for (const Entry& e : m.entries) {
        if (!only.empty()) {
            bool want = false;
            for (const std::string& n : only) want = want || n == e.name;
            if (!want) continue;
        }
        // outputs of an earlier run must not pass for this one's
        std::remove((dir + "/" + e.name + "/status.txt").c_str());
        for (const Output& o : e.outputs) std::remove((dir + "/" + o.file).c_str());
        how.clear();
        rc = in_child([&]() { return child_run(dir, e); }, timeout_s, how);
        if (rc == 0) {
            ++ok;
        } else {
            ++failed;
            if (rc < 0) {
                write_status(dir, e, "error " + how + "\n");
                std::printf("kernel %s: FAILED: %s\n", e.name.c_str(), how.c_str());
            }
        }
        std::fflush(stdout);
    }
    std::printf("summary: %d ok, %d failed\n", ok, failed);
    return failed ? 1 : 0;
}
