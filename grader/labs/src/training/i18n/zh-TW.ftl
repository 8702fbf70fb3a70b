# 訓練實驗（training）給學生看的訊息，繁體中文（臺灣）。目前只有實驗的一部分訊息在這裡：
# 其餘的評分訊息仍是英文（見 i18n 測試的範圍）。

## 案例（kinds.rs）

case-on = ，在第 { $case } 個案例（共 { $total } 個；{ $shape }）
shape-init = { $inputs } 個輸入、{ $outputs } 個輸出
shape-layer = 一批 { $batch } 筆、{ $inputs } 個輸入、{ $outputs } 個輸出
shape-extreme = 極端值
shape-model = 一批 { $batch } 筆
shape-batches = n = { $n }，batch_size = { $batch }
shape-loader = { $n } 筆樣本，每批 { $batch } 筆

## 每個判定（judge.rs）

passed-details = `{ $function }`：{ $reason }。

## 正確答案的說明（judge.rs）

init-right = 形狀正確，權重和偏差依文件在 ±1/√in 上均勻抽樣（先權重、後偏差），梯度為零，而且可以用種子重現（{ $cases } 個案例）
right-on-all = 全部 { $cases } 個案例都正確
backward-right = 在全部 { $cases } 個案例中，輸入的梯度正確，權重和偏差的梯度也正確地累加，而且和中央差分的結果一致
loss-right = 全部 { $cases } 個案例都正確，包括極端值
loss-grads-right = 全部 { $cases } 個案例都正確，包括極端值，而且和中央差分的結果一致
model-composes = 在全部 { $cases } 個案例中，forward、loss、backward 和 zero_grad 都正確地組合了你自己的層、激活函式和損失函式（其中 { $composed } 個案例裡，這些元件算出的值和參考答案不同：那由它們自己的項目扣分，這一項不扣）
model-right = 在全部 { $cases } 個案例中，forward、loss、backward（每個參數的梯度）和 zero_grad 都正確
optimizer-right = { $steps } 步都符合公式
batches-right = 在全部 { $cases } 個案例中，都是 0..n 的隨機打亂分割，每個 epoch 都不同，而且可以重現
epoch-right = 從評分程式給的起點和批次順序開始，一個 epoch（{ $batches } 個批次）和參考答案一致：參數和參考答案的差距在移動距離的 { $within } 以內（取隱藏單元的中位數），平均損失 { $loss }
accuracy-right = 在 { $examples } 筆樣本上是 { $expected }，符合預期
