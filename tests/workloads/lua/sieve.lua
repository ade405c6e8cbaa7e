-- Integer loops and bit operations: a sieve of Eratosthenes, N-queens by
-- backtracking with bitmasks, a matrix product and a 64-bit hash.

local function sieve(n)
  local comp = {}
  local count = 0
  for i = 2, n do
    if not comp[i] then
      count = count + 1
      for j = i * i, n, i do comp[j] = true end
    end
  end
  return count
end
print("primes below 200000", sieve(200000))

local function queens(n)
  local all = (1 << n) - 1
  local solutions = 0
  local function place(cols, d1, d2)
    if cols == all then solutions = solutions + 1; return end
    local free = all & ~(cols | d1 | d2)
    while free ~= 0 do
      local bit = free & -free
      free = free ~ bit
      place(cols | bit, ((d1 | bit) << 1) & all, (d2 | bit) >> 1)
    end
  end
  place(0, 0, 0)
  return solutions
end
for n = 4, 9 do print(string.format("%d-queens: %d", n, queens(n))) end

local function matmul(a, b, n)
  local c = {}
  for i = 1, n do
    local ci, ai = {}, a[i]
    for j = 1, n do
      local s = 0
      for k = 1, n do s = s + ai[k] * b[k][j] end
      ci[j] = s
    end
    c[i] = ci
  end
  return c
end
local n = 40
local a, b = {}, {}
for i = 1, n do
  a[i], b[i] = {}, {}
  for j = 1, n do a[i][j] = (i * j) % 7 - 3; b[i][j] = (i + 2 * j) % 5 - 1 end
end
local c = matmul(a, b, n)
local tr = 0
for i = 1, n do tr = tr + c[i][i] end
print("matrix trace", tr, c[1][1], c[n][n])

-- FNV-1a over bytes with 64-bit wrap-around multiplication
local hash = 0xcbf29ce484222325
for i = 1, 100000 do
  hash = (hash ~ (i & 0xff)) * 0x100000001b3
end
print(string.format("fnv1a %016x", hash))
print(string.format("shifts %x %x %d %d", 1 << 63, -1 >> 60, 7 // -2, -7 % 3))
print(math.maxinteger, math.mininteger, math.maxinteger + 1 == math.mininteger)
