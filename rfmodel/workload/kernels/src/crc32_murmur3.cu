// rfmodel: description = Integer hashing of fixed-size records: per 32-bit word a MurmurHash3 mixing round and a bitwise (table-free) CRC-32 update, then fmix32 finalisation, an output hash pair, and a bucket count with a global atomic.
// rfmodel: threads_per_cta = 256
// rfmodel: ctas = 120
// rfmodel: trip = 16
// rfmodel: category = integer-heavy, compute-bound, register-insensitive, cache-insensitive

__device__ __forceinline__ unsigned int rotl32(unsigned int x, int r) { return (x << r) | (x >> (32 - r)); }

__device__ __forceinline__ unsigned int fmix32(unsigned int h)
{
    h ^= h >> 16;
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    h *= 0xc2b2ae35u;
    h ^= h >> 16;
    return h;
}

extern "C" __global__ void __launch_bounds__(256)
crc32_murmur3(int nrec, int words, unsigned int seed, const unsigned int* __restrict__ data,
              uint2* __restrict__ hashes, unsigned int nbuckets, unsigned int* __restrict__ bucket_counts)
{
    const unsigned int c1 = 0xcc9e2d51u;
    const unsigned int c2 = 0x1b873593u;
    const int stride = gridDim.x * blockDim.x;

    for (int rec = blockIdx.x * blockDim.x + threadIdx.x; rec < nrec; rec += stride) {
        const unsigned int* p = data + (size_t)rec * words;
        unsigned int h = seed;
        unsigned int crc = 0xffffffffu;
        for (int w = 0; w < words; ++w) {
            const unsigned int word = p[w];
            unsigned int k = word * c1;
            k = rotl32(k, 15);
            k *= c2;
            h ^= k;
            h = rotl32(h, 13);
            h = h * 5u + 0xe6546b64u;

            crc ^= word;
#pragma unroll
            for (int b = 0; b < 32; ++b)
                crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1u)));
        }
        h ^= (unsigned int)(words * 4);
        h = fmix32(h);
        crc = ~crc;
        hashes[rec] = make_uint2(h, crc);
        atomicAdd(&bucket_counts[(h ^ rotl32(crc, 7)) % nbuckets], 1u);
    }
}
