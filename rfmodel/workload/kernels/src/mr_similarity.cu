// rfmodel: description = Mars MapReduce SimilarityScore, map stage: each thread takes one map record (a pair of documents), computes the cosine similarity of their feature vectors in a float4 loop over the dimensions, stages the emitted (score, (doc1, doc2)) pair in dynamic shared memory and copies it byte by byte into the intermediate key/value buffers at the offsets the framework's prefix sums gave it.
// rfmodel: threads_per_cta = 256
// rfmodel: ctas = 2046
// rfmodel: trip = 64
// rfmodel: category = memory-bound, cache-sensitive, fp-heavy, register-sensitive
// rfmodel: suite = papers
// rfmodel: benchmark = Mars SimilarityScore
// rfmodel: original = Mars (HKUST, Nov 2009 release for CUDA SDK 2.3, as bundled in the GPGPU-Sim benchmark set's C/sample_apps) SimilarityScore/MarsLib.cu: Mapper with map() of SimilarityScore/map.cu inlined (256 threads, one record per thread, 20 bytes a thread of dynamic shared memory; run script's dataset, 1024 documents x 256 features: 523776 pairs)
// rfmodel: papers = stt
// rfmodel: original_regs = 60
// rfmodel: original_shared = 0
// rfmodel: original_threads_per_cta = 256

// A map record is a key (the document-feature matrix, by address) and a value (the two documents, the
// feature count, and a result slot the map leaves alone), both stored in byte buffers that a table of int4
// (key offset, key bytes, value offset, value bytes) indexes, as the Mars runtime lays them out.
struct mr_ss_key {
    float* matrix;
};
struct mr_ss_val {
    int doc1;
    int doc2;
    int dim;
    float result;
};

// Five words of staging per thread for what the map emits (Mars' per-thread output buffer).
extern __shared__ char mr_ss_stage[];
#define MR_SS_STAGE_BYTES (5 * sizeof(int))

// Mars numbers CTAs of a (possibly 2-D) grid column-major and threads globally from that.
#define MR_SS_CTA (gridDim.y * blockIdx.x + blockIdx.y)
#define MR_SS_GTID (MR_SS_CTA * blockDim.x + threadIdx.x)

// Append one (key, value) pair to this thread's part of the intermediate buffers: the bytes go after what
// the thread has written so far, and the pair's index entry (offsets and sizes) after its previous one.
__device__ void mr_ss_emit(const char* key, const char* val, int keyBytes, int valBytes, const int* psKeySizes,
                           const int* psValSizes, const int* psCounts, int2* keyValOffsets, char* interKeys,
                           char* interVals, int4* interOffsetSizes, int* curIndex)
{
    __syncthreads();
    const int t = MR_SS_GTID;
    int2 written = keyValOffsets[t];
    char* kout = interKeys + psKeySizes[t] + written.x;
    char* vout = interVals + psValSizes[t] + written.y;
    for (int b = 0; b < keyBytes; ++b)
        kout[b] = key[b];
    for (int b = 0; b < valBytes; ++b)
        vout[b] = val[b];
    written.x += keyBytes;
    written.y += valBytes;
    keyValOffsets[t] = written;

    const int nth = curIndex[t];
    const int slot = psCounts[t] + nth;
    int4 entry = interOffsetSizes[slot];
    if (nth != 0) {
        // (the original reads the previous entry before this test, one before the buffer for the first
        // pair overall; here it is read only when it is used)
        const int4 before = interOffsetSizes[slot - 1];
        entry.x = before.x + before.y;
        entry.z = before.z + before.w;
    }
    entry.y = keyBytes;
    entry.w = valBytes;
    interOffsetSizes[slot] = entry;
    curIndex[t] = nth + 1;
}

// The user's map: cosine similarity a.b / (|a| |b|) of two rows of the matrix, emitted as
// (score, (doc1, doc2)).
__device__ void mr_ss_map(const char* keyBytes, const char* valBytes, const int* psKeySizes,
                          const int* psValSizes, const int* psCounts, int2* keyValOffsets, char* interKeys,
                          char* interVals, int4* interOffsetSizes, int* curIndex)
{
    const mr_ss_key* k = (const mr_ss_key*)keyBytes;
    const mr_ss_val* v = (const mr_ss_val*)valBytes;
    const float* m = k->matrix;
    const int d1 = v->doc1;
    const int d2 = v->doc2;
    const int dim = v->dim;

    const float4* ra = (const float4*)(m + d1 * dim);
    const float4* rb = (const float4*)(m + d2 * dim);
    const int quads = dim >> 2;
    const int tail = dim & 3;
    float dot = 0.0f, na = 0.0f, nb = 0.0f;
    for (int q = 0; q < quads; ++q) {
        const float4 x = ra[q];
        const float4 y = rb[q];
        dot += x.x * y.x + x.y * y.y + x.z * y.z + x.w * y.w;
        na += x.x * x.x + x.y * x.y + x.z * x.z + x.w * x.w;
        nb += y.x * y.x + y.y * y.y + y.z * y.z + y.w * y.w;
    }
    const float* sa = (const float*)(ra + quads);
    const float* sb = (const float*)(rb + quads);
    for (int e = 0; e < tail; ++e) {
        const float x = sa[e];
        const float y = sb[e];
        dot += x * y;
        na += x * x;
        nb += y * y;
    }
    const float score = dot / (sqrtf(na) * sqrtf(nb));

    char* stage = mr_ss_stage + threadIdx.x * MR_SS_STAGE_BYTES;
    float* outKey = (float*)stage;
    int* outVal = (int*)(stage + sizeof(float));
    *outKey = score;
    outVal[0] = d1;
    outVal[1] = d2;
    mr_ss_emit((const char*)outKey, (const char*)outVal, sizeof(float), 2 * sizeof(int), psKeySizes,
               psValSizes, psCounts, keyValOffsets, interKeys, interVals, interOffsetSizes, curIndex);
}

// The runtime's map kernel: CTA c covers records [c * recordsPerTask * blockDim.x, ...), its threads
// striding by blockDim.x; before mapping, each thread opens its first index entry at the offsets of its
// share of the intermediate buffers.
extern "C" __global__ void mr_similarity(char* inputKeys, char* inputVals, int4* inputOffsetSizes, int* psKeySizes,
                                         int* psValSizes, int* psCounts, int2* keyValOffsets, char* interKeys,
                                         char* interVals, int4* interOffsetSizes, int* curIndex, int recordNum,
                                         int recordsPerTask, int taskNum)
{
    const int t = MR_SS_GTID;
    if (t * recordsPerTask >= recordNum)
        return;
    const int span = recordsPerTask * blockDim.x;
    const int first = MR_SS_CTA * span;
    int end = first + span;
    if (end > recordNum)
        end = recordNum;

    const int open = psCounts[t];
    int4 head = interOffsetSizes[open];
    head.x = psKeySizes[t];
    head.z = psValSizes[t];
    interOffsetSizes[open] = head;

    for (int r = first + threadIdx.x; r < end; r += blockDim.x) {
        const int4 at = inputOffsetSizes[r];
        mr_ss_map(inputKeys + at.x, inputVals + at.z, psKeySizes, psValSizes, psCounts, keyValOffsets, interKeys,
                  interVals, interOffsetSizes, curIndex);
    }
}
