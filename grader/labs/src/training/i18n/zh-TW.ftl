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

## 張量與參考答案的比較（compare.rs）與對應的判定（judge.rs）

mismatch-shape = `{ $name }` 是 { $rows }×{ $cols }，應該是 { $erows }×{ $ecols }：請檢查維度的順序（權重是 out × in，一個批次是每筆樣本一列）
mismatch-not-finite = `{ $name }`[{ $i }, { $j }] 是 { $got }，應該是一個數字：請找找看有沒有對 0 取 log、除以 0，或是 exp 溢位
mismatch-value = `{ $name }`[{ $i }, { $j }] 是 { $got }，應該是 { $expected }（{ $of } 個值裡有 { $off } 個不對；這是差最多的一個）
wrong-shape-reason = `{ $name }` 的形狀不對{ $case }
not-finite-reason = `{ $name }` 是 NaN 或無限大{ $case }
wrong-value-reason = `{ $name }` 不對{ $case }
mismatch-details = `{ $function }`{ $case }：{ $mismatch }。

## Linear::new（judge.rs）

init-shapes-reason = 形狀不對{ $case }
init-shapes-details = `Linear::new({ $inputs }, { $outputs }, rng)`：權重是 { $rows }×{ $cols }，偏差有 { $biases } 個值；應該是 { $outputs }×{ $inputs } 的權重（out × in，和 PyTorch 一樣）和 { $outputs } 個偏差。
init-shapes-hint = nn.Linear(in, out) 把權重存成 out × in
init-grads-reason = 梯度不是零{ $case }
init-grads-details = 新的層的 weight_grad 和 bias_grad 必須是形狀和權重、偏差相同的零。
init-grads-hint = Array2::zeros((out, in)) 和 Array1::zeros(out)
init-bound-reason = `{ $name }` 超出 ±1/√in{ $case }
init-bound-details = `Linear::new({ $inputs }, { $outputs }, rng)`：`{ $name }` 裡有 { $value }，超出了 ±1/√{ $inputs } = ±{ $bound }。
init-bound-hint = PyTorch 從 [−1/√in, 1/√in) 均勻抽樣每個權重和偏差：rng.random_range(-bound..bound)
init-uniform-reason = 權重不是在 ±1/√in 上均勻分布{ $case }
init-uniform-details = `Linear::new({ $inputs }, { $outputs }, rng)`：權重的平均是 { $mean }，有 { $beyond }% 超過界限的一半；在 ±{ $bound } 上均勻分布的值，平均 ≈ 0，而且有 50% 超過一半。
init-uniform-hint = 用 rng.random_range(-bound..bound) 抽每個權重，不要用常態分布或更窄的範圍
init-same-reason = 每個權重都一樣{ $case }
init-same-details = 每個權重都是同一個值：所有單元起點都一樣的層，學到的也會一樣。
init-same-hint = 為每個權重抽一個新的隨機值
init-not-reproducible-reason = 無法用亂數產生器重現{ $case }
init-not-reproducible-details = 兩個種子相同的亂數產生器給出了不同的層：層必須從傳入的 `rng` 抽樣（不能用其他亂數來源），這樣同一個種子每次都會得到相同的模型。
init-from-rng-hint = 每個值都從 `rng` 參數抽樣
init-other-seed-reason = 換了種子卻得到相同的層{ $case }
init-other-seed-details = 另一個種子的亂數產生器給出了相同的權重：權重必須來自 `rng` 參數。
init-weights-draws-reason = 權重不是照文件說明抽樣的{ $case }
init-weights-draws-hint = bound = 1.0 / (inputs as f32).sqrt()，然後一列一列抽權重，每個都用 rng.random_range(-bound..bound)（Array2::from_shape_simple_fn），在偏差之前
init-biases-zero-reason = 偏差全都是 0{ $case }
init-biases-zero-hint = nn.Linear 也會抽樣偏差：在權重之後，每個都用 rng.random_range(-bound..bound)
init-biases-draws-reason = 偏差不是照文件說明抽樣的{ $case }
init-biases-draws-hint = 在權重之後、從同一個 rng 抽偏差，每個都用 rng.random_range(-bound..bound)
init-biases-zero-what = 偏差全都是 0；
init-draws-details = { $call }：{ $what }{ $mismatch }。

## Linear::forward（judge.rs）

forward-no-bias-hint = 輸出是沒有加偏差的 x·Wᵀ：請在每一列加上 b
forward-hint = y = x·Wᵀ + b：x 是 batch × in，W 是 out × in，所以要乘 W 的轉置（`x.dot(&self.weight.t())`），再在每一列加上偏差

## Linear::backward、激活函式與損失函式（judge.rs）

returned-input-gradient = 傳回的輸入梯度
backward-weight-only-batch = weight_grad 裡只有這個批次的梯度：backward 必須把梯度「加」上去（`+=`），就像 loss.backward() 會一直累加到 zero_grad 為止
backward-bias-missing = bias_grad 沒有改變：少了偏差的梯度（加上 grad_output 每一行的總和，`grad_output.sum_axis(Axis(0))`）
backward-bias-only-batch = bias_grad 裡只有這個批次的梯度：backward 必須把梯度「加」上去（`+=`）
backward-weight-hint = dL/dW = grad_outputᵀ · x（out × in），加到 weight_grad 上
backward-bias-hint = dL/db 是 grad_output 每一行的總和，加到 bias_grad 上
backward-input-hint = dL/dx = grad_output · W（batch × in）
central-differences-hint = 這和中央差分 (f(x+h) − f(x−h)) / 2h 的結果不一致
relu-hint = relu(x) = max(x, 0)，逐元素計算
relu-backward-hint = 在 ReLU 的輸入 x > 0 的地方梯度照常通過，在 x ≤ 0 的地方是 0：grad_output × (x > 0)
sigmoid-hint = σ(x) = 1 / (1 + e^−x)；x < 0 時改用 e^x / (1 + e^x)，才不會溢位
relu-backward-unchanged-hint = 梯度原封不動地通過了：ReLU 在 x ≤ 0 的地方會擋住梯度
relu-backward-zero-hint = 在 x 剛好是 0 的地方梯度也是 0（PyTorch 的選擇）：請判斷 x > 0，而不是 x ≥ 0
bce-extreme-hint = 當 p 剛好是 0 或 1 時，ln(0) 是 −∞：像 PyTorch 一樣把每個 log 限制在 −100 以上，max(ln p, −100)
bce-hint = 對每個元素取 −mean(y·ln p + (1 − y)·ln(1 − p))
cross-entropy-extreme-hint = e^1000 會溢位成無限大：取指數之前，先把每一列減掉該列最大的 logit（log-sum-exp）
cross-entropy-hint = 對每一列取 ln Σ e^logit − logit[label] 的平均
loss-grad-sign-hint = 梯度的正負號反了：它指向上坡（對這些損失函式，梯度是 prediction − target，不是 target − prediction）
loss-grad-n-hint = 梯度大了 N 倍：損失是平均值，所以要除以 N
cross-entropy-grad-extreme-hint = e^1000 會溢位成無限大：取指數之前，先把每一列減掉該列最大的 logit
bce-grad-extreme-hint = 當 p 剛好是 0 或 1 時，p(1 − p) 是 0：請除以 max(p(1 − p), 1e−12)
bce-grad-hint = (p − y) / (p(1 − p)) / N，逐元素計算
cross-entropy-grad-hint = (softmax(row) − one-hot(label)) / batch，逐列計算
loss-central-differences-hint = 這和損失函式的中央差分結果不一致

## 模型（judge.rs）

zero-grad-reason = zero_grad 之後 layer{ $layer } 還留著梯度
zero-grad-details = 呼叫 zero_grad 之後，layer{ $layer } 的權重或偏差梯度不是全部為零。
zero-grad-hint = zero_grad 必須把兩層的兩種梯度都歸零
model-loss-hint = 模型的損失是它輸出的平均 BCE（SimpleNN）或交叉熵（Mlp）
gradient-of = layer{ $layer }.{ $parameter } 的梯度

## 最佳化器與批次（judge.rs）

adam-no-correction-hint = 這是沒有偏差修正的 Adam：把 m 除以 (1 − β1^t)、v 除以 (1 − β2^t)，t 是到目前為止走過的步數（第一步是 1）
adam-stuck-counter-hint = 步數計數器 t 沒有前進：每一步開始時把 t 加 1
adam-hint = m = β1·m + (1 − β1)·g；v = β2·v + (1 − β2)·g²；p −= lr·m̂ / (√v̂ + ε)，每個張量的 m 和 v 要在步與步之間保留
sgd-hint = 對每個權重和偏差做 p −= lr · grad
after-step-reason = 第 { $step } 步之後{ $reason }
after-step-details = 共 { $steps } 步中的第 { $step } 步之後：{ $details }
not-a-split-reason = 不是 0..n 的分割{ $case }
not-a-split-details = `batches({ $n }, { $size }, rng)`，第 { $call } 次呼叫：{ $why }。
not-a-split-hint = 把 0..n 的 Vec 打亂，再切成大小為 batch_size 的區塊（`chunks`）
not-shuffled-reason = 沒有打亂{ $case }
not-shuffled-details = `batches({ $n }, { $size }, rng)` 保持 0, 1, 2, … 的順序：設定 shuffle=True 的 DataLoader 每個 epoch 都會抽一個新的隨機順序。
not-shuffled-hint = 把索引切成批次之前先打亂（用 rng 做 Fisher–Yates 洗牌）
same-order-reason = 每個 epoch 的順序都一樣{ $case }
same-order-details = 對同一個亂數產生器呼叫兩次，得到相同的順序：每個 epoch 都必須重新打亂。
same-order-hint = 從傳入的 rng 抽樣（每抽一次它都會前進），不要用固定種子的新亂數產生器
order-not-reproducible-details = 種子相同的亂數產生器給出了不同的順序：順序只能來自 rng 參數，這樣同一個種子每次都會得到相同的執行結果。
order-from-rng-hint = 每個亂數都從 rng 參數抽樣

## 一個 epoch 與準確率（judge.rs）

epoch-nan-reason = 第 { $batch } 個批次（共 { $batches } 個）之後出現 NaN 或無限大
epoch-nan-details = `{ $function }`：在第 { $batch } 個批次（共 { $batches } 個）之後，損失或某個參數不再是數字（之前的批次都正常）。
epoch-nan-hint = 請檢查那個批次的損失和它的梯度：對 0 取 log、除以 0，或是不斷變大的步伐（梯度從沒歸零）
mean-loss-summed-hint = 各批次的損失加總了，但沒有除以批次數
mean-loss-per-example-hint = 每個批次的損失被每筆樣本各算了一次：每個批次只加一次 model.loss，再除以批次數
mean-loss-hint = 把每個批次 model.loss 傳回的值加起來，再除以批次數
mean-loss-reason = 平均損失不對：是預期的 { $ratio }×
mean-loss-details = `{ $function }` 訓練得正確（參數和參考答案一致），但傳回的平均損失是 { $loss }，應該是 { $expected }：是預期的 { $ratio }×。
epoch-off-reason = 一個 epoch 之後參數偏離了參考答案
epoch-off-details = 從評分程式給的起點和批次順序開始，`{ $function }` 結束時和參考答案的參數差了移動距離的 { $typical }（取隱藏單元的中位數；全部一起算是 { $all }）。{ $detail }
epoch-off-hint = 每個批次依序做：zero_grad、forward、loss、backward、最佳化器的一步（評分程式用它自己的模型和最佳化器執行你的迴圈，所以出錯的是迴圈）
accuracy-wrong-reason = 傳回 { $got }，應該是 { $expected }
accuracy-wrong-details = `accuracy` 在 { $examples } 筆樣本上傳回 { $got }；預測正確的比例是 { $expected }。
accuracy-wrong-hint = 預測類別（SimpleNN 是 p > 0.5，Mlp 是最大的 logit）等於標籤的列所占的比例（0 到 1）
fault-no-zero-grad = 梯度從沒歸零，所以會一個批次接一個批次地累積
fault-no-zero-grad-hint = 每個批次開始時呼叫 model.zero_grad()
fault-step-before-backward = 最佳化器在 backward 之前就走了一步，所以每一步用的都是上一個批次的梯度
fault-step-before-backward-hint = 順序是 zero_grad、forward、loss、backward、step
fault-adam = Adam 沒有做偏差修正
fault-adam-hint = 把 m 除以 (1 − β1^t)、v 除以 (1 − β2^t)
fault-sum-loss = 損失是對整個批次加總，而不是取平均
fault-sum-loss-hint = 損失（以及它的梯度）是批次的平均；epoch 的損失是各批次損失的平均
loop-wrong-reason = 迴圈不對：{ $what }
loop-wrong-details = 從評分程式給的起點和批次順序開始，`{ $function }` 沒有照參考的迴圈執行；它符合的是這樣的迴圈：{ $what }。
forward-is-hint = forward 是 { $head }

## train（same_run.rs）

train-count-reason = { $epochs } 個 epoch 卻有 { $got } 個損失
train-count-details = `train` 傳回了 { $got } 個損失；它必須每個 epoch 傳回一個（{ $epochs } 個）。
train-count-hint = 把每個 epoch 的平均損失 push 進去
train-seed-reason = 相同的種子給出了不同的數字
train-seed-details = 用相同的種子再執行一次 `train`，第一個 epoch 的損失是 { $again }，而不是 { $first }：同一個種子每次都必須給出相同的數字。
train-seed-hint = 每個亂數（每個 epoch 的批次）都從 rng 參數抽樣
train-written-out = 每個 epoch 先呼叫 `batches(n, batch_size, rng)`，再依那個順序呼叫 `train_epoch`
train-idle-reason = 依賴 batches 和 train_epoch，而它們還不會訓練
train-idle-details = `train` 是拿來和「{ $written_out }」從相同起點和種子得到的結果比較，而那樣做讓每個參數都停在原地：要等 `batches` 和 `train_epoch` 會訓練之後，這個項目才能檢查你跨 epoch 的迴圈。
train-idle-hint = 先讓 `batches` 和 `train_epoch` 這兩個項目通過
train-different-reason = 各 epoch 的結果和每個 epoch 做 batches + train_epoch 的不同
train-different-details = `train` 應該得到和「{ $written_out }」相同的結果，用相同的模型、最佳化器和 rng；{ $how }。
train-different-hint = 在每個 epoch 開始時（不是只有一次）用 batches(n, batch_size, rng) 產生新的順序，每次 train_epoch 都傳入同一個最佳化器，而且剛好執行 `epochs` 個 epoch
train-loss-reason = 第 { $epoch } 個 epoch 的損失是 { $got }，應該是 { $expected }
train-loss-details = `train` 訓練得正確，但第 { $epoch } 個 epoch 傳回了 { $got }；train_epoch 對它傳回的是 { $expected }。全部的值：{ $all }。
train-loss-hint = 依序把每次 train_epoch 傳回的損失 push 進去
train-right = 用 train_epoch 跑了 { $epochs } 個 epoch、每個 epoch 都用新的批次，用相同種子再跑一次也相同；損失 { $first } → { $last }，在 { $held_out } 筆保留的樣本上正確率 { $accuracy }%
