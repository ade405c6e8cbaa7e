-- Held-out benchmark: numeric loops in floating point and integers: a
-- Mandelbrot set, a spectral-norm style matrix product and a prime count.
local w, h, iter = 48, 32, 60
local inside = 0
for y = 0, h - 1 do
  local ci = 2.0 * y / h - 1.0
  local row = {}
  for x = 0, w - 1 do
    local cr = 2.5 * x / w - 2.0
    local zr, zi, i = 0.0, 0.0, 0
    while i < iter and zr * zr + zi * zi < 4.0 do
      zr, zi = zr * zr - zi * zi + cr, 2 * zr * zi + ci
      i = i + 1
    end
    if i == iter then inside = inside + 1; row[#row + 1] = "#" else row[#row + 1] = "." end
  end
  if y % 8 == 0 then print(table.concat(row)) end
end
print("inside", inside)

local function A(i, j) local ij = i + j - 1; return 1.0 / (ij * (ij - 1) * 0.5 + i) end
local function Av(x, y, N)
  for i = 1, N do
    local a = 0
    for j = 1, N do a = a + x[j] * A(i, j) end
    y[i] = a
  end
end
local function Atv(x, y, N)
  for i = 1, N do
    local a = 0
    for j = 1, N do a = a + x[j] * A(j, i) end
    y[i] = a
  end
end
local N = 40
local u, v, t = {}, {}, {}
for i = 1, N do u[i] = 1 end
for _ = 1, 6 do Av(u, t, N); Atv(t, v, N); Av(v, t, N); Atv(t, u, N) end
local vBv, vv = 0, 0
for i = 1, N do vBv = vBv + u[i] * v[i]; vv = vv + v[i] * v[i] end
print(string.format("spectral %.9f", math.sqrt(vBv / vv)))

local primes = 0
for n = 2, 20000 do
  local p = true
  for d = 2, math.floor(math.sqrt(n)) do
    if n % d == 0 then p = false break end
  end
  if p then primes = primes + 1 end
end
print("primes", primes)
