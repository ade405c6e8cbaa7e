-- Closures, upvalues, coroutines, varargs, metatables and error handling.

-- counters sharing and not sharing upvalues
local function counter(step)
  local n = 0
  return function() n = n + step; return n end, function() return n end
end
local inc1, get1 = counter(1)
local inc3, get3 = counter(3)
for _ = 1, 1000 do inc1(); inc3() end
print("counters", get1(), get3())

-- function composition and currying
local function compose(f, g) return function(...) return f(g(...)) end end
local function curry(f, a) return function(...) return f(a, ...) end end
local add = function(a, b) return a + b end
local double = function(x) return 2 * x end
local h = compose(double, curry(add, 10))
local acc = 0
for i = 1, 50000 do acc = acc + h(i) % 97 end
print("composed", acc)

-- generators with coroutines: primes by trial division, consumed lazily
local function primes()
  return coroutine.wrap(function()
    local found = {}
    local n = 2
    while true do
      local isp = true
      for _, p in ipairs(found) do
        if p * p > n then break end
        if n % p == 0 then isp = false; break end
      end
      if isp then found[#found + 1] = n; coroutine.yield(n) end
      n = n + 1
    end
  end)
end
local gen, sum, last = primes(), 0, 0
for _ = 1, 3000 do last = gen(); sum = sum + last end
print("3000 primes, last and sum", last, sum)

-- producer/consumer passing values both ways
local co = coroutine.create(function(a)
  local total = a
  while true do
    local v = coroutine.yield(total)
    if v == nil then break end
    total = total + v
  end
  return "done", total
end)
local _, t = coroutine.resume(co, 1)
for i = 2, 100 do _, t = coroutine.resume(co, i) end
print("coroutine total", t, coroutine.resume(co, nil))
print("status", coroutine.status(co))

-- varargs
local function stats(...)
  local n = select("#", ...)
  local s, mx = 0, -math.huge
  for i = 1, n do local v = select(i, ...); s = s + v; if v > mx then mx = v end end
  return n, s, mx
end
print("varargs", stats(3, 1, 4, 1, 5, 9, 2, 6))
print("table.pack/unpack", table.unpack(table.pack(1, 2, 3), 2, 3))

-- metatables: a vector type with arithmetic and tostring
local Vec = {}
Vec.__index = Vec
local function vec(x, y) return setmetatable({ x = x, y = y }, Vec) end
Vec.__add = function(a, b) return vec(a.x + b.x, a.y + b.y) end
Vec.__mul = function(a, k) return vec(a.x * k, a.y * k) end
Vec.__eq = function(a, b) return a.x == b.x and a.y == b.y end
Vec.__tostring = function(a) return "(" .. a.x .. ", " .. a.y .. ")" end
function Vec:dot(o) return self.x * o.x + self.y * o.y end
local v = vec(0, 0)
for i = 1, 1000 do v = v + vec(i, -i) * 2 end
print("vector", tostring(v), v:dot(vec(1, 1)), v == vec(1001000, -1001000))

-- inheritance through __index chains
local Animal = {}
Animal.__index = Animal
function Animal.new(name) return setmetatable({ name = name }, Animal) end
function Animal:speak() return self.name .. " makes a sound" end
local Dog = setmetatable({}, { __index = Animal })
Dog.__index = Dog
function Dog.new(name) return setmetatable(Animal.new(name), Dog) end
function Dog:speak() return self.name .. " barks" end
print(Animal.new("cat"):speak(), Dog.new("rex"):speak())

-- errors: pcall, error objects, xpcall with a handler
local ok, err = pcall(function() error({ code = 42 }) end)
print("pcall", ok, type(err), err.code)
ok, err = pcall(function() local t = nil; return t.x end)
print("pcall", ok, (err:gsub("^.-:%d+: ", "")))
print("xpcall", xpcall(function() error("boom", 0) end, function(m) return "handled " .. m end))
local depth = 0
local function deep(n) depth = n; if n < 150 then return deep(n + 1) + 0 end return n end
print("deep recursion", deep(1), depth)
