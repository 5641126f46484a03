// rfmodel: description = ISPASS-2009 AES (GPGPU-Sim's AES benchmark), 128-bit encryption: 256 threads per CTA, four per 16-byte block, one state column each; the four T-box tables are staged in shared memory, and each of the ten rounds is a barrier-separated pass between two shared state buffers (byte gathers along the ShiftRows pattern, four T-box lookups, the round-key word XORed in).
// rfmodel: threads_per_cta = 256
// rfmodel: ctas = 257
// rfmodel: trip = 1
// rfmodel: category = integer-heavy, compute-bound, register-insensitive, cache-insensitive
// rfmodel: suite = papers
// rfmodel: benchmark = ISPASS-2009 AES
// rfmodel: original = ispass2009-benchmarks AES/aesEncrypt128_kernel.h: aesEncrypt128 (256 threads, grid = padded bytes/1024; data/output.bmp, 262198 bytes padded to 263168: 257 CTAs); measured with its round-key texture fetches as plain global loads (as here): 22 registers (29 with a texture object)
// rfmodel: papers = stt
// rfmodel: original_regs = 22
// rfmodel: original_shared = 6144
// rfmodel: original_threads_per_cta = 256

#define IS_AES_THREADS 256

// a 32-bit state column or table entry, also addressed byte by byte (byte 0 = least significant)
union is_aes_word {
    unsigned int w;
    unsigned char b[4];
};

// ShiftRows as a gather: the thread of column c takes byte j of column (c + j) mod 4 of its block (a byte
// table in the original: 32-bit entries here, as the executor has no sub-word constant loads)
__constant__ unsigned int is_aes_shift[16] = {0, 1, 2, 3, 1, 2, 3, 0, 2, 3, 0, 1, 3, 0, 1, 2};

// out/in: the data as 32-bit words (nbytes of them / 4, a multiple of 256 per CTA); rkey: the 44-word expanded
// key; tbox: the four encryption T-tables, 256 words each, one after the other (the original keeps them in
// constant memory and the round keys in a texture: plain global memory here).
extern "C" __global__ void is_aes(unsigned int* out, const unsigned int* in, int nbytes, const unsigned int* rkey,
                                  const unsigned int* tbox)
{
    __shared__ is_aes_word stA[IS_AES_THREADS];
    __shared__ is_aes_word stB[IS_AES_THREADS];
    __shared__ is_aes_word t0[256];
    __shared__ is_aes_word t1[256];
    __shared__ is_aes_word t2[256];
    __shared__ is_aes_word t3[256];

    const unsigned int tid = threadIdx.x;
    const unsigned int col = tid % 4;        // this thread's column of its block
    const unsigned int blk = (tid / 4) * 4;  // the block's first column in the state buffers
    int kw;  // the round-key word this thread uses (a signed index, as the original's)

    stA[tid].w = in[IS_AES_THREADS * blockIdx.x + tid];
    t0[tid].w = tbox[tid];
    t1[tid].w = tbox[256 + tid];
    t2[tid].w = tbox[512 + tid];
    t3[tid].w = tbox[768 + tid];
    __syncthreads();

    // initial AddRoundKey
    kw = col;
    stB[tid].w = stA[tid].w ^ rkey[kw];
    __syncthreads();

    // rounds 1..9: SubBytes, ShiftRows, MixColumns through the T-tables, then AddRoundKey
#pragma unroll
    for (int r = 1; r < 10; ++r) {
        const is_aes_word* src = (r & 1) ? stB : stA;
        is_aes_word* dst = (r & 1) ? stA : stB;
        unsigned int a0 = src[is_aes_shift[col * 4 + 0] + blk].b[0];
        unsigned int a1 = src[is_aes_shift[col * 4 + 1] + blk].b[1];
        unsigned int a2 = src[is_aes_shift[col * 4 + 2] + blk].b[2];
        unsigned int a3 = src[is_aes_shift[col * 4 + 3] + blk].b[3];
        a0 = t0[a0].w;
        a1 = t1[a1].w;
        a2 = t2[a2].w;
        a3 = t3[a3].w;
        kw = col + 4 * r;
        dst[tid].w = a0 ^ a1 ^ a2 ^ a3 ^ rkey[kw];
        __syncthreads();
    }

    // final round (no MixColumns): the S-box is the top byte of the second T-table
    const unsigned int a0 = stA[is_aes_shift[col * 4 + 0] + blk].b[0];
    const unsigned int a1 = stA[is_aes_shift[col * 4 + 1] + blk].b[1];
    const unsigned int a2 = stA[is_aes_shift[col * 4 + 2] + blk].b[2];
    const unsigned int a3 = stA[is_aes_shift[col * 4 + 3] + blk].b[3];
    kw = col + 40;
    const unsigned int k = rkey[kw];
    stB[tid].b[3] = t1[a3].b[3] ^ (k >> 24);
    stB[tid].b[2] = t1[a2].b[3] ^ ((k >> 16) & 0xFF);
    stB[tid].b[1] = t1[a1].b[3] ^ ((k >> 8) & 0xFF);
    stB[tid].b[0] = t1[a0].b[3] ^ (k & 0xFF);
    __syncthreads();

    out[IS_AES_THREADS * blockIdx.x + tid] = stB[tid].w;
}
