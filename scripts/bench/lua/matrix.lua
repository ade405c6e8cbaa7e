-- Held-out benchmark: dense matrix products, LU-style elimination and a power iteration
local function mat(n, f) local m = {} for i = 1, n do local r = {} for j = 1, n do r[j] = f(i, j) end m[i] = r end return m end
local function mul(a, b, n)
  local c = {}
  for i = 1, n do
    local ci, ai = {}, a[i]
    for j = 1, n do
      local s = 0.0
      for k = 1, n do s = s + ai[k] * b[k][j] end
      ci[j] = s
    end
    c[i] = ci
  end
  return c
end
local n = 34
local a = mat(n, function(i, j) return 1.0 / (i + j - 1) end)
local b = mat(n, function(i, j) return (i == j) and 2.0 or ((i * j) % 5) / 10 end)
local c = a
for r = 1, 6 do c = mul(c, b, n) end
local det = 1.0
local m = mat(n, function(i, j) return c[i][j] + ((i == j) and n or 0) end)
for k = 1, n do
  local p = m[k][k]
  det = det * p
  for i = k + 1, n do
    local f = m[i][k] / p
    local mi, mk = m[i], m[k]
    for j = k, n do mi[j] = mi[j] - f * mk[j] end
  end
end
local v = {} for i = 1, n do v[i] = 1.0 end
local lambda = 0
for it = 1, 40 do
  local w = {}
  for i = 1, n do local s = 0 for j = 1, n do s = s + b[i][j] * v[j] end w[i] = s end
  local norm = 0 for i = 1, n do norm = norm + w[i] * w[i] end
  norm = math.sqrt(norm)
  for i = 1, n do v[i] = w[i] / norm end
  lambda = norm
end
print(string.format("matrix %.6e %.6f", det, lambda))
