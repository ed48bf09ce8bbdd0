// Writes data[i] = `rounds` steps of an LCG started from (i ^ seed): every
// word depends on its invocation index and the whole dispatch takes long
// enough (rounds) that reading before the event completes would see zeros.
#version 450
layout(local_size_x = 64) in;
layout(std430, set = 0, binding = 0) buffer Out { uint data[]; };
layout(push_constant) uniform Params {
  uint count;
  uint seed;
  uint rounds;
} p;

void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i >= p.count) return;
  uint x = i ^ p.seed;
  for (uint k = 0u; k < p.rounds; ++k) x = x * 1664525u + 1013904223u;
  data[i] = x;
}
