-- Held-out benchmark: objects and closures: classes with metatables and
-- inheritance, method calls, closures as iterators and accumulators, and
-- a small event queue of callbacks.
local Shape = {}
Shape.__index = Shape
function Shape.new(name) return setmetatable({ name = name }, Shape) end
function Shape:describe() return self.name .. " " .. string.format("%.1f", self:area()) end

local Rect = setmetatable({}, { __index = Shape })
Rect.__index = Rect
function Rect.new(w, h) local r = Shape.new("rect"); r.w, r.h = w, h; return setmetatable(r, Rect) end
function Rect:area() return self.w * self.h end

local Circle = setmetatable({}, { __index = Shape })
Circle.__index = Circle
function Circle.new(r) local c = Shape.new("circle"); c.r = r; return setmetatable(c, Circle) end
function Circle:area() return 3.14159 * self.r * self.r end

local shapes = {}
for i = 1, 2000 do shapes[i] = i % 3 == 0 and Circle.new(i % 17) or Rect.new(i % 13, i % 7 + 1) end
local total = 0
for _ = 1, 10 do for _, s in ipairs(shapes) do total = total + s:area() end end
print(string.format("area %.1f", total), shapes[3]:describe(), shapes[4]:describe())

local function counter(step)
  local n = 0
  return function() n = n + step; return n end
end
local cs = {}
for i = 1, 50 do cs[i] = counter(i) end
local acc = 0
for _ = 1, 400 do for i = 1, #cs do acc = acc + cs[i]() end end
print("counters", acc)

local function range(a, b)
  return function() if a <= b then a = a + 1; return a - 1 end end
end
local s = 0
for _ = 1, 100 do for v in range(1, 200) do s = s + v end end
print("range", s)

local queue, fired = {}, 0
local function on(ev, f) queue[#queue + 1] = { ev, f } end
for i = 1, 300 do on(i % 5, function(x) fired = fired + x + i end) end
for round = 1, 20 do
  for _, q in ipairs(queue) do if q[1] == round % 5 then q[2](round) end end
end
print("fired", fired)
local Vec = {}
Vec.__index = Vec
Vec.__add = function(a, b) return setmetatable({ a[1] + b[1], a[2] + b[2] }, Vec) end
local v = setmetatable({ 0, 0 }, Vec)
for i = 1, 20000 do v = v + setmetatable({ i % 3, i % 5 }, Vec) end
print("vec", v[1], v[2])
