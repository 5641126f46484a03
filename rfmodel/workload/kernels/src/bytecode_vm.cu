// rfmodel: description = Tiny register-machine bytecode interpreter: every thread runs the same program (opcode and operand streams) over its own value; the dense 12-case switch on the opcode compiles to indirect jump tables (BRX).
// rfmodel: threads_per_cta = 128
// rfmodel: ctas = 120
// rfmodel: trip = 32
// rfmodel: category = irregular, integer-heavy, register-insensitive, cache-insensitive

extern "C" __global__ void __launch_bounds__(128)
bytecode_vm(int n, int len, const int* __restrict__ ops, const float* __restrict__ args,
            float* __restrict__ data, int* __restrict__ steps_taken)
{
    const int stride = gridDim.x * blockDim.x;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        float acc = data[i];
        float t = 1.0f;
        int cnt = 0;
        int pc = 0;
        while (pc < len) {
            // The opcode is switched on unmasked: masking it (op & 0xff) makes ptxas
            // fall back to a compare-and-branch tree instead of a jump table.
            const int op = ops[pc];
            const float arg = args[pc];
            ++pc;
            ++cnt;
            switch (op) {
            case 0: acc += t; break;
            case 1: acc *= t; break;
            case 2: t = acc - t; break;
            case 3: acc = fmaxf(acc, t); break;
            case 4: acc = fminf(acc, t); break;
            case 5: t = arg; break;
            case 6: acc = fmaf(acc, arg, t); break;
            case 7: t = acc; break;
            case 8: acc = fabsf(acc); break;
            case 9:
                // Conditional forward skip of arg instructions when acc is negative.
                if (acc < 0.0f) pc += (int)arg;
                break;
            case 10: acc = __int_as_float(__float_as_int(acc) ^ __float_as_int(arg)); break;
            case 11: pc = len; break;
            default: break;
            }
        }
        data[i] = acc;
        steps_taken[i] = cnt;
    }
}
