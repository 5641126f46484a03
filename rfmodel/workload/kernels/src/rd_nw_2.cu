// rfmodel: description = Rodinia nw needle_cuda_shared_2: Needleman-Wunsch scoring of the lower-right half of the score matrix, one 16 x 16 tile per CTA of 16 threads along an anti-diagonal of tiles; each CTA loads its tile's substitution scores and the borders into shared memory, fills the tile anti-diagonal by anti-diagonal (max of the diagonal plus the substitution score and the two gap moves), and writes it back.
// rfmodel: threads_per_cta = 16
// rfmodel: ctas = 127
// rfmodel: trip = 16
// rfmodel: category = integer-heavy, memory-bound, cache-insensitive, register-insensitive
// rfmodel: suite = papers
// rfmodel: benchmark = Rodinia nw
// rfmodel: original = Rodinia 3.1 cuda/nw/needle_kernel.cu: needle_cuda_shared_2 (16 threads per CTA; 2048 x 2048 sequences, penalty 10: 128 tiles a side, launch i has i CTAs, the widest 127)
// rfmodel: papers = stt, cerf
// rfmodel: original_regs = 32
// rfmodel: original_shared = 2180
// rfmodel: original_threads_per_cta = 16

#include "rd_nw.cuh"

// Launch diag of the sweep handles tiles (tile_x, tile_y) along one anti-diagonal of the tiles x tiles grid of
// tiles (rd_nw_tile says what m, ref, cols and gap are).
extern "C" __global__ void rd_nw_2(int* ref, int* m, int cols, int gap, int diag, int tiles)
{
    const int b = blockIdx.x;
    rd_nw_tile(ref, m, cols, gap, b + tiles - diag, tiles - b - 1, false);
}
