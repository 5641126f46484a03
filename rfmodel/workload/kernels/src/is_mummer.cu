// rfmodel: description = ISPASS-2009 MUM (MUMmerGPU), forward matching of DNA reads against a suffix tree of the reference: one thread per read, 256 per CTA; for each start position the thread walks down the tree (a child chosen by the next base, then the edge's bases compared with the reference string), records the node and edge offset where a match of at least the minimum length ends, then follows the suffix link of the last node passed and skips the bases it already knows to match (the matching-statistics walk).
// rfmodel: threads_per_cta = 256
// rfmodel: ctas = 196
// rfmodel: trip = 6
// rfmodel: category = irregular, integer-heavy, memory-bound, cache-sensitive, register-sensitive
// rfmodel: suite = papers
// rfmodel: benchmark = ISPASS-2009 MUM
// rfmodel: original = ispass2009-benchmarks MUM/mummergpu_kernel.cu: mummergpuKernel (256 threads, one per query, grid = ceil(queries/256); data/NC_003997.20k.fna, 1,399,930 bases, and NC_003997_q25bp.50k.fna, 50,000 reads of 25 bases, minimum match 20: 196 CTAs); measured with its node, children and reference texture fetches as plain global loads (as here): 28 registers (31 with texture objects)
// rfmodel: papers = cerf
// rfmodel: original_regs = 28
// rfmodel: original_shared = 0
// rfmodel: original_threads_per_cta = 256

// The suffix tree is kept as the original keeps it: a node's address is its texture coordinate (x, y), nodes
// numbered id = 1, 2, ... (the root is 1) laid out in blocks of 32 rows of a 4096-wide 2-D array, address
// (0, 0) meaning "no node"; a result records the id, decoded from the address as the original does.
#define IS_MUM_TEX_WIDTH 4096
// the reference string is laid out as the original's 2-D reference texture: 65536 bytes a row, four
// consecutive bases in four consecutive rows of a 4-row block
#define IS_MUM_REF_PITCH 65536

// a node address: x in the low 16 bits, y in the high 16
union is_mum_addr {
    unsigned int data;
    struct {
        unsigned short x, y;
    };
};

// the node's id (what a result records)
__device__ __forceinline__ int is_mum_node_id(is_mum_addr a)
{
    return (a.x << 5) + (a.y & 0x1F) + ((a.y >> 5) << 17);
}

// the node's entry in the row-major 2-D node and children arrays
__device__ __forceinline__ int is_mum_entry(is_mum_addr a)
{
    return a.y * IS_MUM_TEX_WIDTH + a.x;
}

// base `pos` of the reference string
__device__ __forceinline__ char is_mum_ref_base(const char* ref, int pos)
{
    const int bx = pos & 0x3FFFF, by = pos >> 18;
    return ref[((by << 2) + (bx & 3)) * IS_MUM_REF_PITCH + (bx >> 2)];
}

// one result per query start position, as the original's MatchCoord: the node where the match ends and how
// many bases of that node's edge it covers (left at zero when the match is shorter than the minimum)
struct is_mum_coord {
    unsigned int node;
    short edge_match_length;
};

// coords: the results, qlen - min_len + 1 per query, query q's from coords[qaddr[q] - q*(min_len+1)];
// queries: each query as 'q', its bases, '\0' (qaddr[q] is where its 'q' is); nodes[entry] = (start, end,
// $-child address, suffix-link address): the edge into the node is reference bases start..end;
// kids[entry] = the addresses of its A, C, G, T children; ref: the string the tree was built over ('s', the
// bases, '$'). The original fetches nodes, children and reference bases from 2-D textures: plain global
// loads here, from row-major arrays of the textures' shapes.
extern "C" __global__ void is_mummer(is_mum_coord* coords, const char* queries, const int* qaddr,
                                     const int* qlens, int nq, int min_len, const int4* nodes,
                                     const uint4* kids, const char* ref)
{
    const int q = blockIdx.x * blockDim.x + threadIdx.x;
    if (q >= nq)
        return;
    const int len = qlens[q];
    const int base = qaddr[q];
    is_mum_coord* out = coords + base - q * (min_len + 1);
    const char* s = queries + base;  // s[0] is the 'q' sentinel: s[k] is the k-th base of this suffix

    is_mum_addr at;  // the node to resume from ((0, 0): start again at the root)
    at.data = 0;
    int known = 0;   // bases below `at` known to match (skipped, not compared, after a suffix link)
    int reach = 0;   // bases matched so far, plus one (the sentinel)

    for (int start = 0; start <= len - min_len; ++start, ++out, ++s) {
        if (at.data == 0 || reach < 1) {
            at.x = 0;  // the root
            at.y = 1;
            reach = 1;
            known = 0;
        }
        is_mum_addr from = at;            // the last node whose edge was passed
        int4 e = make_int4(0, -1, 0, 0);  // the edge being walked: (start, end, ...)
        int r = 0;                        // the next reference position on it
        char c = s[reach];
        while (c != '\0') {
            const uint4 k = kids[is_mum_entry(at)];
            from = at;
            switch (c) {
            case 'A': at.data = k.x; break;
            case 'C': at.data = k.y; break;
            case 'G': at.data = k.z; break;
            case 'T': at.data = k.w; break;
            default: at.data = 0; break;
            }
            if (at.data == 0) {
                // no child for this base: the match ends at the node just passed
                if (reach > min_len) {
                    out->node = is_mum_node_id(from);
                    out->edge_match_length = 0;
                }
                reach -= 1;
                known = 0;
                goto follow_link;
            }
            e = nodes[is_mum_entry(at)];
            if (known) {
                // skip/count: bases known to match need no comparison, whole edges at a time
                const int elen = e.y - e.x + 1;
                if (known >= elen) {
                    r = e.y + 1;
                    reach += elen;
                    known -= elen;
                } else {
                    r = e.x + known;
                    reach += known;
                    known = 0;
                }
            } else {
                // the child was chosen by this base: it matches
                ++reach;
                r = e.x + 1;
            }
            c = s[reach];
            while (r <= e.y && c != '\0') {
                if (is_mum_ref_base(ref, r) != c)
                    goto record;  // a mismatch inside the edge
                ++reach;
                ++r;
                c = s[reach];
            }
        }
    record:
        // the match ends on the edge into `at`, r - start bases down it
        if (reach > min_len) {
            out->node = is_mum_node_id(at);
            out->edge_match_length = r - e.x;
        }
        known = r - e.x;
        reach -= known + 1;
    follow_link:
        // the next start position: one base less is known to match from the suffix link of `from`
        e = nodes[is_mum_entry(from)];
        at.data = e.w;
    }
}
