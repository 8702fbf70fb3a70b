# 引擎的學生訊息（繁體中文，臺灣）。

## 這裡沒有評分的項目（src/check/gpu.rs）

not-graded-prefix = 沒有評分：
skipped-reason = 略過：{ $reason }
skipped-details = 沒有評分：{ $reason }。
