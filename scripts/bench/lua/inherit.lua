-- Held-out benchmark: classes with inheritance, varargs, pcall and error objects
local Base = {} Base.__index = Base
function Base.new(x) return setmetatable({ x = x }, Base) end
function Base:value() return self.x end
function Base:add(...) local s = self.x for _, v in ipairs({ ... }) do s = s + v end return s end
local Derived = setmetatable({}, { __index = Base }) Derived.__index = Derived
function Derived.new(x, y) local o = Base.new(x) o.y = y return setmetatable(o, Derived) end
function Derived:value() return Base.value(self) * 2 + self.y end
local function risky(o, i)
  if i % 13 == 0 then error({ code = i }) end
  return o:value() + o:add(i, i + 1, i + 2)
end
local sum, errs = 0, 0
for i = 1, 12000 do
  local o = (i % 3 == 0) and Base.new(i) or Derived.new(i, i % 7)
  local ok, r = pcall(risky, o, i)
  if ok then sum = sum + r else errs = errs + r.code % 5 end
end
print("inherit", sum, errs)
local t = {}
for i = 1, 5000 do t[#t + 1] = tostring(i * 3) .. ":" .. select("#", 1, 2, i) end
print("select", #table.concat(t, ","))
